"""EL2N (Paul et al., 2021): keep the samples with the largest error L2 norm ‖softmax − onehot‖ early in training.

Paul et al. score at epoch 20 of a 200-epoch CIFAR-10 training: 10 % into the run. By default the score is taken
from the trace epoch `max(1, round(early_fraction × R))` of an R-epoch trace (epoch 2 of a 20-epoch trace); an
explicit `epoch` overrides it. The last trace epoch, where a small pool is nearly memorised, is not the default.
"""

from __future__ import annotations

import numpy as np
from pydantic import Field

from stages.core.params import StrictModel
from stages.methods.selection.coreset import SELECTORS, CoresetSelector, SelectionPool, select_by_score

EARLY_FRACTION = 0.1
"""Paul et al.'s scoring epoch as a share of the training run (epoch 20 of 200)."""


class EL2NOptions(StrictModel):
    """EL2N's options: which trace epoch scores (default: the early epoch, 10 % into the trace)."""

    balance: bool = Field(False, description="split the budget evenly over classes (class quotas)")
    epoch: int | None = Field(
        None, ge=1, description="trace epoch whose EL2N scores (default: round(early_fraction × R), ≥ 1)"
    )
    early_fraction: float = Field(
        EARLY_FRACTION, gt=0, le=1, description="the default epoch as a share of the trace's R epochs"
    )


def early_epoch(trace_epochs: int, fraction: float = EARLY_FRACTION) -> int:
    """The 1-based trace epoch `fraction` into an R-epoch trace (at least 1, at most R)."""
    return min(trace_epochs, max(1, round(fraction * trace_epochs)))


@SELECTORS.register("el2n")
class EL2NSelector(CoresetSelector):
    """Largest EL2N score at the chosen (by default early) epoch of the trace."""

    name = "el2n"
    needs_trace = True
    Options = EL2NOptions

    uses_features = False

    def scoring_epoch(self, trace_epochs: int) -> int:
        """The 1-based trace epoch this selector scores at, for an R-epoch trace."""
        return self.options.epoch or early_epoch(trace_epochs, self.options.early_fraction)

    def scores(self, pool: SelectionPool) -> np.ndarray:
        """EL2N ‖softmax − onehot‖ at the scoring epoch."""
        epoch = self.scoring_epoch(pool.trace.epochs)
        if epoch > pool.trace.epochs:
            raise ValueError(f"el2n: epoch {epoch} is beyond the trace's {pool.trace.epochs} epochs")
        return pool.trace.error_norm[:, epoch - 1]

    def select(self, pool: SelectionPool, budget: int, rng: np.random.Generator) -> np.ndarray:
        return select_by_score(self.scores(pool), pool.labels, budget, self.options.balance)
