"""SFBD: diffusion models from noisy images and a little clean data (Lu, Wu & Yu, ICML 2025)."""
