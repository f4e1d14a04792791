"""E4 (Ren, Wang, Zhang, Gu, Xu 2024), as E3TC in the authors' public code
(panxulab/optimal-batched-linear-bandits `algorithms.py`): Explore, Estimate, Eliminate, Exploit.

1. Explore: D-optimal design on all arms, ⌈2 π_x g √T / d⌉ pulls each (cumulative ridge estimate, λ = 1).
2. Estimate: the track-and-stop allocation w solving the SDP
       min_w Σ w_x Δ̂_x  s.t.  w ≥ 0,  [[H(w), x], [xᵀ, Δ̂_x²/2]] ⪰ 0 for every x ≠ x̂*,
   H(w) = Σ w_x x xᵀ + 10⁻¹⁰ I (cvxpy + SCS, eps 10⁻², as the code); pull ⌈min(w_x α log T, τ)⌉ times each,
   α = 1 + d (log log T)⁴ / log T, τ = min((log T)^{1+γ}, T/(2K)).
3. Chernoff stopping test: Z = min_{x≠x̂*} Δ̂_x² / (2‖x − x̂*‖²_{V⁻¹}) > β = ½ log(t^{d/2} T) → commit to x̂*.
4. Otherwise phases of D-optimal exploration and 2ε elimination (ε = √(d log(KT²)/n)): first n = (log T)^{1+γ},
   then n = T^{1 − 2^{−l}}, l = 1, 2, …; one arm left: play it until T.

With the code's default γ = 10, (log T)^{1+γ} exceeds every horizon used here, so when the stopping test fails
step 4 is D-optimal exploration until T; γ is an option and is recorded in the trace.
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import Field

from stages.core.params import StrictModel
from stages.methods.bandits.base import BanditAlgorithm, RidgeState, pulls_in_order
from stages.methods.bandits.phased_elimination import d_optimal_pulls, eliminate
from stages.methods.bandits.trace import Recorder, Trace

SDP_JITTER = 1e-10


def track_and_stop_weights(arms: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, str]:
    """The SDP allocation w ≥ 0 (one per arm) and the solver status; zeros if the solver returns nothing.

    H(w) is a d × d matrix variable tied to Σ w_x x xᵀ by an equality (the same problem as the code's, with
    each LMI over H instead of the K-term sum, which keeps the conic program small).
    """
    import cvxpy as cp

    estimates = arms @ theta
    best = int(np.argmax(estimates))
    gaps = estimates[best] - estimates
    n_arms, dim = arms.shape
    weights = cp.Variable(n_arms)
    gram = cp.Variable((dim, dim), symmetric=True)
    constraints = [weights >= 0, gram == arms.T @ cp.diag(weights) @ arms + SDP_JITTER * np.eye(dim)]
    for index in range(n_arms):
        if index != best:
            column = arms[index][:, None]
            corner = np.array([[gaps[index] ** 2 / 2]])
            constraints.append(cp.bmat([[gram, column], [column.T, corner]]) >> 0)
    problem = cp.Problem(cp.Minimize(weights @ gaps), constraints)
    try:
        problem.solve(solver=cp.SCS, max_iters=100_000, eps=1e-2)
    except cp.SolverError:
        return np.zeros(n_arms), "solver_error"
    if weights.value is None:
        return np.zeros(n_arms), str(problem.status)
    return np.maximum(np.asarray(weights.value, dtype=np.float64), 0.0), str(problem.status)


def chernoff_statistic(arms: np.ndarray, theta: np.ndarray, gram_inverse: np.ndarray) -> tuple[float, int]:
    """Z = min_{x ≠ x̂*} Δ̂_x² / (2 ‖x − x̂*‖²_{V⁻¹}) and x̂*."""
    estimates = arms @ theta
    best = int(np.argmax(estimates))
    others = np.delete(np.arange(len(arms)), best)
    differences = arms[others] - arms[best]
    norms = np.einsum(
        "ij,jk,ik->i", differences, gram_inverse + SDP_JITTER * np.eye(arms.shape[1]), differences
    )
    gaps = estimates[best] - estimates[others]
    return float(np.min(gaps**2 / (2 * norms))), best


class E4(BanditAlgorithm):
    """E4 / E3TC: D-optimal exploration, track-and-stop batch, Chernoff stop, then elimination phases."""

    name = "e4"
    eliminates = True

    class Options(StrictModel):
        gamma: float = Field(10.0, ge=0, description="γ of the (log T)^{1+γ} phase (the code's default 10)")
        ridge: float = Field(1.0, gt=0, description="ridge λ of the cumulative regression (code: 1)")
        design_tol: float = Field(1e-3, gt=0, description="Frank–Wolfe duality-gap tolerance")

    def prepare(self) -> None:
        """Import cvxpy (about a second) before the clock starts."""
        import cvxpy  # noqa: F401

    def _explore(self, arms, active, n_pulls, state, recorder) -> None:
        counts = d_optimal_pulls(arms[active], n_pulls, arms.shape[1], self.options.design_tol)
        pulled, rewards = recorder.play(pulls_in_order(active, counts, recorder.remaining))
        state.add(arms[pulled], rewards)

    def play(self, arms: np.ndarray, recorder: Recorder) -> Trace:
        horizon, (n_arms, dim) = recorder.horizon, arms.shape
        log_t, gamma = math.log(max(horizon, 3)), self.options.gamma
        state = RidgeState(dim, self.options.ridge)
        active = np.arange(n_arms)
        self._explore(arms, active, math.sqrt(horizon), state, recorder)
        weights, status = track_and_stop_weights(arms, state.theta())
        alpha = 1 + dim * math.log(log_t) ** 4 / log_t
        cap = min(log_t ** (1 + gamma), horizon / (2 * n_arms))
        counts = np.ceil(np.minimum(weights * alpha * log_t, cap) - 1e-9).astype(np.int64)
        pulled, rewards = recorder.play(pulls_in_order(active, counts, recorder.remaining))
        state.add(arms[pulled], rewards)
        statistic, best = chernoff_statistic(arms, state.theta(), state.inverse())
        threshold = 0.5 * (dim / 2 * math.log(max(recorder.pulls, 1)) + math.log(horizon))
        stopped = statistic > threshold
        if stopped:
            recorder.eliminate(np.delete(active, best))
            active = np.array([best])
        level, first = 1, True
        while len(active) > 1 and recorder.remaining:
            n_pulls = log_t ** (1 + gamma) if first else horizon ** (1 - 2.0**-level)
            self._explore(arms, active, n_pulls, state, recorder)
            if recorder.remaining == 0:
                break
            epsilon = math.sqrt(dim * math.log(n_arms * horizon**2) / n_pulls)
            keep = eliminate(arms, active, state.theta(), epsilon)
            recorder.eliminate(active[~keep])
            active = active[keep]
            level, first = (level, False) if first else (level + 1, False)
        if recorder.remaining:
            recorder.play(np.full(recorder.remaining, active[0]))
        return recorder.finish(
            self.name,
            survivors=active,
            gamma=gamma,
            sdp_status=status,
            chernoff_statistic=round(statistic, 6),
            chernoff_threshold=round(threshold, 6),
            stopped_after_batch_2=bool(stopped),
        )
