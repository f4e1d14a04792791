"""Info-Coevolution (ICML 2025): online selective annotation with an automatic stop."""
