"""EL2N (Paul et al., 2021): keep the samples with the largest error L2 norm ‖softmax − onehot‖ early in training."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from stages.core.params import StrictModel
from stages.methods.selection.coreset import SELECTORS, CoresetSelector, SelectionPool, select_by_score


class EL2NOptions(StrictModel):
    """EL2N's options: which trace epoch scores (default: the last logged one)."""

    balance: bool = Field(False, description="split the budget evenly over classes (class quotas)")
    epoch: int | None = Field(None, ge=1, description="trace epoch whose EL2N scores (default: the last)")


@SELECTORS.register("el2n")
class EL2NSelector(CoresetSelector):
    """Largest EL2N score at the chosen epoch of the trace."""

    name = "el2n"
    needs_trace = True
    Options = EL2NOptions

    uses_features = False

    def scores(self, pool: SelectionPool) -> np.ndarray:
        """EL2N ‖softmax − onehot‖ at the chosen epoch."""
        epoch = self.options.epoch or pool.trace.epochs
        if epoch > pool.trace.epochs:
            raise ValueError(f"el2n: epoch {epoch} is beyond the trace's {pool.trace.epochs} epochs")
        return pool.trace.error_norm[:, epoch - 1]

    def select(self, pool: SelectionPool, budget: int, rng: np.random.Generator) -> np.ndarray:
        return select_by_score(self.scores(pool), pool.labels, budget, self.options.balance)
