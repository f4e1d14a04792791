"""Dynamic data selection unified with augmentation (ICML 2025): per-epoch selection by density × consistency."""
