"""KinDEL (insitro, ICML 2025): DNA-encoded library benchmark, DEL-Compose and fingerprint baselines."""
