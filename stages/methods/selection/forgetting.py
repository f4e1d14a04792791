"""Forgetting events (Toneva et al., 2019): keep the samples forgotten most often during training.

A forgetting event is a sample classified correctly at one epoch and wrongly at the next. Samples never
classified correctly count as forgotten `epochs` times (the most), as in the original method.
"""

from __future__ import annotations

import numpy as np

from stages.methods.selection.coreset import (
    SELECTORS,
    BalanceOption,
    CoresetSelector,
    SelectionPool,
    select_by_score,
)


def forgetting_counts(correct: np.ndarray) -> np.ndarray:
    """Forgetting events per row of an (n, epochs) boolean correctness trace."""
    events = np.sum(correct[:, :-1] & ~correct[:, 1:], axis=1).astype(np.float64)
    never_learned = ~correct.any(axis=1)
    events[never_learned] = correct.shape[1]
    return events


@SELECTORS.register("forgetting")
class ForgettingSelector(CoresetSelector):
    """Most-forgotten samples first."""

    name = "forgetting"
    needs_trace = True
    Options = BalanceOption

    uses_features = False

    def scores(self, pool: SelectionPool) -> np.ndarray:
        """Forgetting events per sample."""
        return forgetting_counts(pool.trace.correct)

    def select(self, pool: SelectionPool, budget: int, rng: np.random.Generator) -> np.ndarray:
        counts = self.scores(pool)
        # Random tie-breaking: many samples share a count, and index order would bias towards early rows.
        jitter = rng.random(len(counts)) * 1e-3
        return select_by_score(counts + jitter, pool.labels, budget, self.options.balance)
