"""Herding (Welling, 2009; Chen et al., 2010): greedily pick samples whose running mean tracks the pool mean."""

from __future__ import annotations

import numpy as np

from stages.methods.selection.coreset import (
    SELECTORS,
    BalancedByDefault,
    CoresetSelector,
    SelectionPool,
    per_class,
)


def herd(features: np.ndarray, budget: int) -> np.ndarray:
    """Greedy herding on the rows of `features`; returns `budget` row indices in pick order."""
    features = features.astype(np.float64, copy=False)
    target = features.mean(axis=0)
    available = np.ones(len(features), dtype=bool)
    running_sum = np.zeros(features.shape[1])
    chosen = np.empty(budget, dtype=np.int64)
    for step in range(budget):
        residual = target * (step + 1) - running_sum
        distances = np.sum((residual - features) ** 2, axis=1)
        distances[~available] = np.inf
        pick = int(np.argmin(distances))
        chosen[step] = pick
        available[pick] = False
        running_sum += features[pick]
    return chosen


@SELECTORS.register("herding")
class HerdingSelector(CoresetSelector):
    """Herding in feature space (use embeddings of a trained model for images)."""

    name = "herding"
    Options = BalancedByDefault

    def select(self, pool: SelectionPool, budget: int, rng: np.random.Generator) -> np.ndarray:
        return per_class(
            pool.labels,
            budget,
            self.options.balance,
            lambda members, quota: members[herd(pool.features[members], quota)],
        )
