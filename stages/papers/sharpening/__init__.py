"""Sharpness dynamics in the minimalist model (Yoo, Song, Yun; ICML 2025): closed form vs measured sharpness."""
