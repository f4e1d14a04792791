"""k-center greedy (Sener & Savarese, 2018): repeatedly add the sample farthest from everything chosen."""

from __future__ import annotations

import numpy as np

from stages.methods.selection.coreset import (
    SELECTORS,
    BalancedByDefault,
    CoresetSelector,
    SelectionPool,
    per_class,
)


def k_center_greedy(features: np.ndarray, budget: int, first: int) -> np.ndarray:
    """Greedy 2-approximation of k-center starting from row `first`; returns row indices in pick order."""
    features = features.astype(np.float32, copy=False)
    squared_norms = np.einsum("ij,ij->i", features, features)
    chosen = np.empty(budget, dtype=np.int64)
    nearest = np.full(len(features), np.inf, dtype=np.float32)
    pick = first
    for step in range(budget):
        chosen[step] = pick
        distances = squared_norms - 2.0 * features @ features[pick] + squared_norms[pick]
        np.minimum(nearest, distances, out=nearest)
        nearest[chosen[: step + 1]] = -np.inf
        pick = int(np.argmax(nearest))
    return chosen


@SELECTORS.register("kcenter")
class KCenterSelector(CoresetSelector):
    """k-center greedy in feature space, seeded with a random first center."""

    name = "kcenter"
    Options = BalancedByDefault

    def select(self, pool: SelectionPool, budget: int, rng: np.random.Generator) -> np.ndarray:
        def pick(members: np.ndarray, quota: int) -> np.ndarray:
            return members[k_center_greedy(pool.features[members], quota, int(rng.integers(len(members))))]

        return per_class(pool.labels, budget, self.options.balance, pick)
