"""Injected label noise: symmetric flips to a uniformly chosen other class, for robustness experiments."""

from __future__ import annotations

import numpy as np

from stages.core.errors import PipelineError


def flip_labels(labels: np.ndarray, rate: float, n_classes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(noisy labels, flipped mask): exactly round(rate × n) rows, drawn at random, get another class."""
    if not 0 <= rate < 1:
        raise PipelineError(f"label noise rate {rate} must be in [0, 1)")
    if n_classes < 2 and rate > 0:
        raise PipelineError("label noise needs at least two classes")
    rng = np.random.default_rng(seed)
    n_flipped = round(rate * len(labels))
    rows = rng.choice(len(labels), size=n_flipped, replace=False)
    noisy = np.array(labels, dtype=np.int64, copy=True)
    noisy[rows] = (noisy[rows] + rng.integers(1, n_classes, size=n_flipped)) % n_classes
    flipped = np.zeros(len(labels), dtype=bool)
    flipped[rows] = True
    return noisy, flipped
