"""MRMC: Maximum Reduction as Maximum Contribution (ICML 2025).

Each sample's logged training losses ℓ_1..ℓ_R are fitted by log ℓ_r ≈ log q − w·r; the predicted loss
reduction over the trace is φ = q·(1 − e^{−wR}). Samples whose loss the model reduces most contribute most to
convergence and are kept; the balance constraint splits the budget evenly over classes.

Optional (`proxy_fraction` > 0), after the unofficial implementation: inside each class the top
`proxy_fraction` of the quota is taken by φ; a ridge proxy predicts φ from the features, and the rest is
filled by φ̃·exp(−γ·|pred − φ̃|) (φ̃ = φ standardised), which favours samples whose reduction is typical of
their neighbourhood.
"""

from __future__ import annotations

import numpy as np
from pydantic import Field

from stages.methods.selection.coreset import (
    SELECTORS,
    BalancedByDefault,
    CoresetSelector,
    SelectionPool,
    per_class,
    select_by_score,
    top_by_score,
)

LOSS_FLOOR = 1e-8


class MRMCOptions(BalancedByDefault):
    """MRMC's options: class balance (on by default) and the optional proxy fill."""

    proxy_fraction: float = Field(0.0, ge=0, lt=1)
    gamma: float = Field(2.0, ge=0)


def fit_loss_decay(loss_trace: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares fit of log ℓ_r = log q − w·r (r = 1..R) per row; returns (q, w)."""
    epochs = np.arange(1, loss_trace.shape[1] + 1, dtype=np.float64)
    log_loss = np.log(np.maximum(loss_trace.astype(np.float64), LOSS_FLOOR))
    centred = epochs - epochs.mean()
    slope = (log_loss - log_loss.mean(axis=1, keepdims=True)) @ centred / np.sum(centred**2)
    intercept = log_loss.mean(axis=1) - slope * epochs.mean()
    return np.exp(intercept), -slope


def loss_reduction(loss_trace: np.ndarray) -> np.ndarray:
    """φ = q·(1 − e^{−wR}): the loss reduction the fitted decay predicts over R epochs."""
    if loss_trace.shape[1] < 2:
        raise ValueError("MRMC needs a loss trace of at least 2 epochs")
    q, w = fit_loss_decay(loss_trace)
    return q * (1.0 - np.exp(-w * loss_trace.shape[1]))


@SELECTORS.register("mrmc")
class MRMCSelector(CoresetSelector):
    """Keep the samples with the largest predicted loss reduction, class-balanced by default."""

    name = "mrmc"
    needs_trace = True
    Options = MRMCOptions

    def select(self, pool: SelectionPool, budget: int, rng: np.random.Generator) -> np.ndarray:
        phi = loss_reduction(pool.trace.loss)
        if self.options.proxy_fraction == 0:
            return select_by_score(phi, pool.labels, budget, self.options.balance)
        fill_scores = self._proxy_scores(pool.features, phi)
        return per_class(
            pool.labels,
            budget,
            self.options.balance,
            lambda members, quota: self._pick(members, quota, phi, fill_scores),
        )

    def _proxy_scores(self, features: np.ndarray, phi: np.ndarray) -> np.ndarray:
        from sklearn.linear_model import Ridge

        standardised = (phi - phi.mean()) / (phi.std() + 1e-12)
        predicted = Ridge(alpha=1.0).fit(features, standardised).predict(features)
        return standardised * np.exp(-self.options.gamma * np.abs(predicted - standardised))

    def _pick(self, members: np.ndarray, quota: int, phi: np.ndarray, fill_scores: np.ndarray) -> np.ndarray:
        n_top = int(np.ceil(self.options.proxy_fraction * quota))
        top = members[top_by_score(phi[members], n_top)]
        rest = np.setdiff1d(members, top, assume_unique=True)
        return np.concatenate([top, rest[top_by_score(fill_scores[rest], quota - n_top)]])
