"""EL2N (Paul et al., 2021): keep the samples with the largest error L2 norm ‖softmax − onehot‖ early in training."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from stages.core.params import StrictModel
from stages.methods.selection.coreset import SELECTORS, CoresetSelector, SelectionPool, select_by_score


class EL2NOptions(StrictModel):
    """EL2N's options: which trace epoch scores (default: the last logged one)."""

    balance: bool = False
    epoch: int | None = Field(None, ge=1)


@SELECTORS.register("el2n")
class EL2NSelector(CoresetSelector):
    """Largest EL2N score at the chosen epoch of the trace."""

    name = "el2n"
    needs_trace = True
    Options = EL2NOptions

    def select(self, pool: SelectionPool, budget: int, rng: np.random.Generator) -> np.ndarray:
        epoch = self.options.epoch or pool.trace.epochs
        if epoch > pool.trace.epochs:
            raise ValueError(f"el2n: epoch {epoch} is beyond the trace's {pool.trace.epochs} epochs")
        return select_by_score(pool.trace.error_norm[:, epoch - 1], pool.labels, budget, self.options.balance)
