"""MRMC: Maximum Reduction as Maximum Contribution (ICML 2025), with the paper's regulariser (MRMC-R).

Loss reduction φ. Each sample's traced losses ℓ_1..ℓ_R (an evaluation pass after each of R training epochs)
are fitted by ordinary least squares on log ℓ_r = log q − w·r, r = 1..R; the predicted reduction over the
trace is φ = q·(1 − e^{−wR}) = ℓ̂(0) − ℓ̂(R), the fitted loss before training minus the fitted loss after R
epochs. `fit="log_linear"` (the paper's form, as in the unofficial code) leaves w unbounded: a sample whose
loss rises gets w < 0 and φ < 0. `fit="log_linear_nonneg"` bounds w ≥ 0 (the constrained least-squares
solution: w = max(ŵ, 0), q refitted as exp(mean log ℓ) when the bound binds), so such a sample gets φ = 0.

MRMC-R (the default, `regularizer=True`). The squared-loss objective splits into "maximise the total
reduction" plus "balance the reductions"; the paper's balance term is a regulariser, not class quotas:

1. C′ = the top ⌊ρ·|C|⌋ samples by φ;
2. a linear output-layer classifier θ′ (multinomial logistic regression) is fitted on C′'s features
   (the trace model's embeddings) and labels;
3. φ_reg(x) = exp(−CE(z(x), y; θ′)) = p_θ′(y | x), the probability θ′ gives x's own label;
4. the remaining |C| − |C′| samples are the top ones by φ − γ·φ_reg.

Samples that C′ already explains well (high φ_reg) are pushed down; samples of a class missing from C′ get
φ_reg = 0. `regularizer=False` is pure MRMC (top |C| by φ). `balance=True` splits the budget into even class
quotas (ours, an ablation: the paper reports no enforced label balance) and applies the rule inside each
class (C′ then takes ⌊ρ·quota⌋ per class).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from stages.core.params import StrictModel
from stages.methods.selection.coreset import (
    SELECTORS,
    CoresetSelector,
    SelectionPool,
    per_class,
    select_by_score,
    top_by_score,
)

LOSS_FLOOR = 1e-8
DecayFit = Literal["log_linear", "log_linear_nonneg"]


class MRMCOptions(StrictModel):
    """MRMC's options: the regulariser (MRMC-R, ρ, γ), the decay fit, and class quotas (off by default)."""

    regularizer: bool = Field(True, description="MRMC-R (the paper's); false: pure MRMC, the top |C| by φ")
    rho: float = Field(0.3, gt=0, lt=1, description="share of the budget taken by φ alone (C′)")
    gamma: float = Field(2.0, ge=0, description="weight of φ_reg in the fill score φ − γ·φ_reg")
    fit: DecayFit = Field("log_linear", description="log_linear: w unbounded; log_linear_nonneg: w ≥ 0")
    balance: bool = Field(False, description="even class quotas (an ablation; not in the paper)")


def fit_loss_decay(loss_trace: np.ndarray, fit: DecayFit = "log_linear") -> tuple[np.ndarray, np.ndarray]:
    """Least-squares fit of log ℓ_r = log q − w·r (r = 1..R) per row; returns (q, w) (w ≥ 0 when bounded)."""
    epochs = np.arange(1, loss_trace.shape[1] + 1, dtype=np.float64)
    log_loss = np.log(np.maximum(loss_trace.astype(np.float64), LOSS_FLOOR))
    centred = epochs - epochs.mean()
    mean_log = log_loss.mean(axis=1)
    rate = -((log_loss - mean_log[:, None]) @ centred) / np.sum(centred**2)
    if fit == "log_linear_nonneg":
        rate = np.maximum(rate, 0.0)
    return np.exp(mean_log + rate * epochs.mean()), rate


def loss_reduction(loss_trace: np.ndarray, fit: DecayFit = "log_linear") -> np.ndarray:
    """φ = q·(1 − e^{−wR}): the loss reduction the fitted decay predicts over R epochs."""
    if loss_trace.shape[1] < 2:
        raise ValueError("MRMC needs a loss trace of at least 2 epochs")
    q, w = fit_loss_decay(loss_trace, fit)
    return q * (1.0 - np.exp(-w * loss_trace.shape[1]))


def regulariser_scores(features: np.ndarray, labels: np.ndarray, core: np.ndarray) -> np.ndarray:
    """φ_reg = exp(−CE) = p_θ′(own label | x) of a linear classifier θ′ fitted on the rows `core`.

    Features are standardised with the whole pool's statistics. A class absent from C′ gets probability 0;
    a C′ of a single class predicts that class with probability 1.
    """
    from sklearn.linear_model import LogisticRegression

    scores = np.zeros(len(labels))
    core_classes = np.unique(labels[core])
    if len(core_classes) == 1:
        scores[labels == core_classes[0]] = 1.0
        return scores
    mean, std = features.mean(axis=0), features.std(axis=0)
    scaled = (features - mean) / np.where(std > 1e-12, std, 1.0)
    model = LogisticRegression(max_iter=1000).fit(scaled[core], labels[core])
    probabilities = model.predict_proba(scaled)
    column = {int(label): index for index, label in enumerate(model.classes_)}
    known = np.isin(labels, model.classes_)
    rows = np.flatnonzero(known)
    scores[rows] = probabilities[rows, [column[int(label)] for label in labels[rows]]]
    return scores


@SELECTORS.register("mrmc")
class MRMCSelector(CoresetSelector):
    """MRMC-R by default: top ρ|C| by φ, the rest by φ − γ·φ_reg (see the module docstring)."""

    name = "mrmc"
    needs_trace = True
    min_trace_epochs = 2  # a loss decay is fitted to the trace
    Options = MRMCOptions

    def scores(self, pool: SelectionPool) -> np.ndarray:
        """φ, the loss reduction of the fitted decay (the fill score also depends on the budget's C′)."""
        return loss_reduction(pool.trace.loss, self.options.fit)

    def select(self, pool: SelectionPool, budget: int, rng: np.random.Generator) -> np.ndarray:
        options = self.options
        phi = self.scores(pool)
        if not options.regularizer:
            return select_by_score(phi, pool.labels, budget, options.balance)
        core = per_class(
            pool.labels,
            budget,
            options.balance,
            lambda members, quota: members[top_by_score(phi[members], int(options.rho * quota))],
        )
        if len(core) == 0:
            return select_by_score(phi, pool.labels, budget, options.balance)
        fill = phi - options.gamma * regulariser_scores(pool.features, pool.labels, core)
        fill[core] = np.inf  # C′ is kept; inside each quota it ranks first
        return select_by_score(fill, pool.labels, budget, options.balance)
