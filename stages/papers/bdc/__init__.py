"""BDC (Sun et al., ICML 2025): fidelity and contamination resistance of benchmark rewrites."""
