"""MRMC: core-set selection by maximum loss reduction (ICML 2025)."""
