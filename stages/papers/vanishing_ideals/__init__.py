"""VI-Net (Pelleriti, Zimmer, Wirth & Pokutta, ICML 2025): latent manifolds approximated by vanishing ideals."""
