"""RINGS graph-dataset audits: mode perturbations, performance separability and mode complementarity."""
