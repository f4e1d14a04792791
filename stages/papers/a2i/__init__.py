"""A2I (Liu et al., ICML 2025): attack to inspection and instruction for cooperative rationalization."""
