"""CLIMB (Dai … Liang, ICML 2025): multitask vs single-task training on a multi-site ECG benchmark, few-shot
transfer to an out-of-distribution site, and fusion heads on frozen encoders."""
