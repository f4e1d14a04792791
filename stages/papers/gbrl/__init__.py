"""GBRL (Fuhrer, Tessler, Dalal, ICML 2025): gradient-boosted trees as a PPO actor-critic, against networks."""
