"""RINGS: auditing graph-learning datasets by mode perturbation (separability and complementarity)."""
