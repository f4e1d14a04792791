"""f-divergence losses (Roulet et al., ICML 2025): the f-softargmax by bisection in classification and a char LM."""
