"""One epoch's selection: which samples are trained on, which of them are augmented, their loss weights, and
which samples are suppressed (never drawn while suppressed)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata

from stages.core.errors import PipelineError


@dataclass(frozen=True)
class EpochPlan:
    """`indices` (distinct, sorted) to train on; `augment` and `weights` are aligned with `indices`."""

    indices: np.ndarray
    augment: np.ndarray
    weights: np.ndarray
    suppressed: np.ndarray

    def __post_init__(self) -> None:
        n_kept = len(self.indices)
        if len(self.augment) != n_kept or len(self.weights) != n_kept:
            raise PipelineError("epoch plan: augment and weights must align with indices")
        if np.intersect1d(self.indices, self.suppressed).size:
            raise PipelineError("epoch plan: a suppressed sample was selected")

    @classmethod
    def plain(cls, indices: np.ndarray, suppressed: np.ndarray | None = None) -> EpochPlan:
        """Train on `indices` without augmentation, every loss weighted 1."""
        indices = np.sort(np.asarray(indices, dtype=np.int64))
        return cls(
            indices=indices,
            augment=np.zeros(len(indices), dtype=bool),
            weights=np.ones(len(indices), dtype=np.float32),
            suppressed=np.empty(0, np.int64) if suppressed is None else np.sort(suppressed),
        )

    @property
    def n_augmented(self) -> int:
        """Samples routed to augmentation this epoch."""
        return int(self.augment.sum())


def kept_count(ratio: float, n_samples: int) -> int:
    """Samples trained on per epoch at `ratio` (at least one)."""
    return max(1, round(ratio * n_samples))


def weighted_draw(weights: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """`size` distinct positions drawn without replacement with probability ∝ `weights` (Efraimidis–Spirakis)."""
    if size >= len(weights):
        return np.arange(len(weights))
    keys = np.log(rng.random(len(weights))) / np.maximum(weights, 1e-12)
    return np.argpartition(-keys, size - 1)[:size]


def rank01(values: np.ndarray) -> np.ndarray:
    """Ranks scaled to [0, 1] (0 = smallest); tied values share their average rank."""
    if len(values) <= 1:
        return np.full(len(values), 0.5)
    return (rankdata(values, method="average") - 1) / (len(values) - 1)


def rank01_within(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """`rank01` computed separately inside each group (e.g. each class)."""
    ranks = np.zeros(len(values), dtype=np.float64)
    for group in np.unique(groups):
        members = np.flatnonzero(groups == group)
        ranks[members] = rank01(values[members])
    return ranks
