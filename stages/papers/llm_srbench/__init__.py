"""LLM-SRBench (Shojaee et al., ICML 2025): equation-discovery problems, searchers and the benchmark's metrics."""
