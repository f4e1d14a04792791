"""Per-sample training records (numpy only): what score-based selectors read, without importing torch."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TrainingTrace:
    """Per-sample records over training epochs, each of shape (n_samples, epochs)."""

    loss: np.ndarray
    correct: np.ndarray
    error_norm: np.ndarray

    @property
    def epochs(self) -> int:
        """Number of logged epochs."""
        return self.loss.shape[1]
