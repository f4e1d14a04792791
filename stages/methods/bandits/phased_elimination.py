"""PhaElimD: phased elimination with D-optimal exploration (Lattimore & Szepesvári, ch. 22), as in the E4
authors' public code (panxulab/optimal-batched-linear-bandits, `SuccessiveElimination`).

Phase l = 1, 2, … on the active set: a D-optimal design π with maximal variance g (≈ d), each arm pulled
⌈2 π_x g n_l / d⌉ times with n_l = T^{1 − 2^{−l}}; θ̂ is ridge regression (λ = 1) on all pulls so far; arms
with ⟨x, θ̂⟩ ≤ max − 2ε, ε = √(d log(K T²)/n_l), are dropped. One arm left: it is played until T.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import Field

from stages.core.params import StrictModel
from stages.methods.bandits.base import BanditAlgorithm, RidgeState, phase_pulls
from stages.methods.bandits.design import optimal_design
from stages.methods.bandits.trace import Recorder, Trace


def d_optimal_pulls(arms: np.ndarray, n_pulls: float, dim: int, tol: float) -> np.ndarray:
    """Pulls per arm of the E4 code's D-optimal exploration: ⌈2 π_x g n / d⌉ (about 2n in all)."""
    design = optimal_design(arms, reg=0.0, tol=tol)
    return np.ceil(2 * design.weights * design.max_variance * n_pulls / dim - 1e-9).astype(np.int64)


def eliminate(arms: np.ndarray, active: np.ndarray, theta: np.ndarray, epsilon: float) -> np.ndarray:
    """Keep the arms whose estimate exceeds the best estimate − 2ε (the code's strict `>`)."""
    estimates = arms[active] @ theta
    return estimates > estimates.max() - 2 * epsilon


class PhasedElimination(BanditAlgorithm):
    """PhaElimD: D-optimal phases of length T^{1−2^{−l}}, cumulative ridge estimate, 2ε elimination."""

    name = "phaelimd"
    eliminates = True

    class Options(StrictModel):
        ridge: float = Field(1.0, gt=0, description="ridge λ of the cumulative regression (code: 1)")
        design_tol: float = Field(1e-3, gt=0, description="Frank–Wolfe duality-gap tolerance")
        final_phase: Literal["spread", "cut"] = Field(
            "spread",
            description="a phase asking for more pulls than are left: share them by the design (spread) or "
            "play arm by arm in index order until T (cut, the authors' code)",
        )

    def play(self, arms: np.ndarray, recorder: Recorder) -> Trace:
        horizon, (n_arms, dim) = recorder.horizon, arms.shape
        state = RidgeState(dim, self.options.ridge)
        active, level = np.arange(n_arms), 1
        while len(active) > 1 and recorder.remaining:
            n_pulls = horizon ** (1 - 2.0**-level)
            counts = d_optimal_pulls(arms[active], n_pulls, dim, self.options.design_tol)
            pulls = phase_pulls(active, counts, recorder.remaining, self.options.final_phase)
            pulled, rewards = recorder.play(pulls)
            state.add(arms[pulled], rewards)
            if recorder.remaining == 0:
                break
            epsilon = math.sqrt(dim * math.log(n_arms * horizon**2) / n_pulls)
            keep = eliminate(arms, active, state.theta(), epsilon)
            recorder.eliminate(active[~keep])
            active, level = active[keep], level + 1
        if recorder.remaining:
            recorder.play(np.full(recorder.remaining, active[0]))
        return recorder.finish(
            self.name, survivors=active, ridge=self.options.ridge, final_phase=self.options.final_phase
        )
