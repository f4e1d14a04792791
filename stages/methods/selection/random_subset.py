"""Uniform random core-set (the baseline every method must beat)."""

from __future__ import annotations

import numpy as np

from stages.methods.selection.coreset import (
    SELECTORS,
    BalanceOption,
    CoresetSelector,
    SelectionPool,
    per_class,
)


@SELECTORS.register("random")
class RandomSelector(CoresetSelector):
    """Uniform sampling without replacement (optionally stratified by class)."""

    name = "random"
    uses_features = False
    Options = BalanceOption

    def select(self, pool: SelectionPool, budget: int, rng: np.random.Generator) -> np.ndarray:
        return per_class(
            pool.labels,
            budget,
            self.options.balance,
            lambda members, quota: rng.choice(members, quota, replace=False),
        )
