"""BLAE (Yu & Oh, ICML 2025): batched linear bandits with arm elimination and regularized G-optimal design."""
