"""BRONet (ICML 2025): BRO orthogonal layers, the logit-annealing loss and certified l2 robustness."""
