"""E4 (Ren, Jin, Xu, ICML 2024), as E3TC in the authors' public code (panxulab/optimal-batched-linear-bandits
`algorithms.py` at its latest commit, da382fb "update E4"): Explore, Estimate, Eliminate, Exploit.

1. Explore: D-optimal design on all arms, ⌈2 π_x g √T / d⌉ pulls each (cumulative ridge estimate, λ = 1).
2. Estimate: the track-and-stop allocation w solving the SDP
       min_w Σ w_x Δ̂_x  s.t.  w ≥ 0,  [[H(w), x], [xᵀ, Δ̂_x²/2]] ⪰ 0 for every x ≠ x̂*,
   H(w) = Σ w_x x xᵀ + 10⁻¹⁰ I; pull ⌈min(w_x α log T, τ)⌉ times each, τ = min((log T)^{1+γ}, T/(2K)), and
   α = (1 + 1/log log T)(1 + d log log T / log T) — the formula of the latest commit (the first one,
   α = 1 + d (log log T)⁴ / log T, was 14.96 against 3.10 at d = 5, T = 2·10⁴; `alpha: first` keeps it).
   The SDP is solved by Clarabel (interior point, gap and feasibility tolerance `sdp_tol`, default 10⁻⁶);
   the code's SCS at eps 10⁻² (`sdp_solver: scs`) stops at allocations that violate the constraints several
   times over (recorded per run as `sdp_violation`, max_x 2‖x‖²_{H(w)⁻¹}/Δ̂_x²: 1 is feasible).
3. Chernoff stopping test: Z = min_{x≠x̂*} Δ̂_x² / (2‖x − x̂*‖²_{V⁻¹}) > β = ½ log(t^{d/2} T) → commit to x̂*.
4. Otherwise phases of D-optimal exploration and 2ε elimination (ε = √(d log(KT²)/n)): first n = (log T)^{1+γ},
   then n = T^{1 − 2^{−l}}, l = 1, 2, …; one arm left: play it until T.

The final phase. With the code's γ = 10, (log T)^{1+γ} exceeds every horizon used here, so when the stopping
test fails step 4 asks for more pulls than are left. The code plays its design arm by arm in index order and
stops at T, so the rest of the horizon goes to the lowest-indexed arms of the support and the regret measures
the arms' order. Here such a phase shares the remaining budget by the design (`final_phase: spread`, the
default; `cut` reproduces the code). γ is an option and is recorded in the trace.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import Field

from stages.core.params import StrictModel
from stages.methods.bandits.base import BanditAlgorithm, RidgeState, phase_pulls
from stages.methods.bandits.phased_elimination import d_optimal_pulls, eliminate
from stages.methods.bandits.trace import Recorder, Trace

SDP_JITTER = 1e-10


def track_and_stop_weights(
    arms: np.ndarray, theta: np.ndarray, solver: str = "clarabel", tol: float = 1e-6
) -> tuple[np.ndarray, str]:
    """The SDP allocation w ≥ 0 (one per arm) and the solver status; zeros if the solver returns nothing.

    H(w) is a d × d matrix variable tied to Σ w_x x xᵀ by an equality (the same problem as the code's, with
    each LMI over H instead of the K-term sum, which keeps the conic program small). `solver`: `clarabel`
    (gap and feasibility tolerances `tol`) or `scs` (eps 10⁻², the code's setting; `tol` unused).
    """
    import warnings

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
        with warnings.catch_warnings():  # "solution may be inaccurate": the status says it, per run
            warnings.simplefilter("ignore", UserWarning)
            if solver == "scs":
                problem.solve(solver=cp.SCS, max_iters=100_000, eps=1e-2)
            else:
                problem.solve(solver=cp.CLARABEL, tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol)
    except cp.SolverError:
        return np.zeros(n_arms), "solver_error"
    if weights.value is None:
        return np.zeros(n_arms), str(problem.status)
    return np.maximum(np.asarray(weights.value, dtype=np.float64), 0.0), str(problem.status)


def sdp_violation(arms: np.ndarray, theta: np.ndarray, weights: np.ndarray) -> float:
    """max_{x ≠ x̂*} 2‖x‖²_{H(w)⁻¹} / Δ̂_x²: ≤ 1 when w satisfies every LMI (Schur complement), > 1 by how much not."""
    estimates = arms @ theta
    best = int(np.argmax(estimates))
    gaps = np.delete(estimates[best] - estimates, best)
    others = np.delete(arms, best, axis=0)
    gram = (arms.T * weights) @ arms + SDP_JITTER * np.eye(arms.shape[1])
    try:
        solved = np.linalg.solve(gram, others.T)
    except np.linalg.LinAlgError:
        return float("inf")
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = 2 * np.einsum("ij,ji->i", others, solved) / gaps**2
    return float(np.nanmax(ratios)) if ratios.size else 0.0


def exploration_rate(horizon: int, dim: int, formula: str = "latest") -> float:
    """α of the track-and-stop batch: the latest commit's (1 + 1/log log T)(1 + d log log T / log T), or the
    first commit's 1 + d (log log T)⁴ / log T (`first`)."""
    log_t = math.log(max(horizon, 3))
    log_log = math.log(log_t)
    if formula == "first":
        return 1 + dim * log_log**4 / log_t
    return (1 + 1 / log_log) * (1 + dim * log_log / log_t)


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
        final_phase: Literal["spread", "cut"] = Field(
            "spread",
            description="a phase asking for more pulls than are left: share them by the design (spread) or "
            "play arm by arm in index order until T (cut, the authors' code)",
        )
        alpha: Literal["latest", "first"] = Field(
            "latest", description="α of the track-and-stop batch: the latest commit's formula or the first"
        )
        sdp_solver: Literal["clarabel", "scs"] = Field(
            "clarabel", description="the track-and-stop SDP's solver (scs: eps 1e-2, the authors' code)"
        )
        sdp_tol: float = Field(1e-6, gt=0, description="Clarabel's gap and feasibility tolerance")

    def prepare(self) -> None:
        """Import cvxpy (about a second) before the clock starts."""
        import cvxpy  # noqa: F401

    def _explore(self, arms, active, n_pulls, state, recorder) -> None:
        counts = d_optimal_pulls(arms[active], n_pulls, arms.shape[1], self.options.design_tol)
        pulls = phase_pulls(active, counts, recorder.remaining, self.options.final_phase)
        pulled, rewards = recorder.play(pulls)
        state.add(arms[pulled], rewards)

    def play(self, arms: np.ndarray, recorder: Recorder) -> Trace:
        horizon, (n_arms, dim) = recorder.horizon, arms.shape
        log_t, gamma = math.log(max(horizon, 3)), self.options.gamma
        state = RidgeState(dim, self.options.ridge)
        active = np.arange(n_arms)
        self._explore(arms, active, math.sqrt(horizon), state, recorder)
        options = self.options
        estimate = state.theta()
        weights, status = track_and_stop_weights(arms, estimate, options.sdp_solver, options.sdp_tol)
        violation = sdp_violation(arms, estimate, weights)
        alpha = exploration_rate(horizon, dim, options.alpha)
        cap = min(log_t ** (1 + gamma), horizon / (2 * n_arms))
        counts = np.ceil(np.minimum(weights * alpha * log_t, cap) - 1e-9).astype(np.int64)
        pulled, rewards = recorder.play(phase_pulls(active, counts, recorder.remaining, options.final_phase))
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
            alpha=round(alpha, 6),
            final_phase=options.final_phase,
            sdp_solver=options.sdp_solver,
            sdp_status=status,
            sdp_violation=round(violation, 4) if np.isfinite(violation) else "inf",
            chernoff_statistic=round(statistic, 6),
            chernoff_threshold=round(threshold, 6),
            stopped_after_batch_2=bool(stopped),
        )
