"""OFUL-type baselines: rarely-switching OFUL (batched) and sequential LinUCB (the unbatched reference).

rs-OFUL follows the E4 authors' public code (`LinUCB` class, name 'rs-OFUL'): at the start of a batch it
picks argmax_x ⟨x, θ̂⟩ + ν ‖x‖_{V⁻¹} with ν_t = max(√(128 d log t), (8/3) log t) (ν = 1 before any pull) and
plays that arm until det V has grown by a factor 1 + C (C = 0.5). n pulls of x multiply det V by
1 + n ‖x‖²_{V⁻¹}, so a batch is exactly ⌊C / ‖x‖²_{V⁻¹}⌋ + 1 pulls, computed in closed form.

LinUCB is OFUL (Abbasi-Yadkori et al. 2011) updated after every pull: β_t = √λ S + σ √(2 log(1/δ) +
d log(1 + t/(λd))), δ = 1/T; every pull is its own batch.
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import Field

from stages.core.params import StrictModel
from stages.methods.bandits.base import BanditAlgorithm, RidgeState
from stages.methods.bandits.trace import Recorder, Trace


def _bonus(arms: np.ndarray, gram_inverse: np.ndarray) -> np.ndarray:
    """‖x‖_{V⁻¹} of every arm."""
    return np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", arms, gram_inverse, arms), 0.0))


class RarelySwitchingOFUL(BanditAlgorithm):
    """rs-OFUL: optimistic arm, replayed until det V grows by 1 + C."""

    name = "rs_oful"

    class Options(StrictModel):
        switch: float = Field(0.5, gt=0, description="C: a new batch once det V grows by a factor 1 + C")
        ridge: float = Field(1.0, gt=0, description="ridge λ (code: 1)")

    def play(self, arms: np.ndarray, recorder: Recorder) -> Trace:
        dim = arms.shape[1]
        state = RidgeState(dim, self.options.ridge)
        while recorder.remaining:
            t = recorder.pulls
            nu = 1.0 if t == 0 else max(math.sqrt(128 * dim * math.log(t)), 8 / 3 * math.log(t))
            inverse = state.inverse()
            arm = int(np.argmax(arms @ state.theta() + nu * _bonus(arms, inverse)))
            variance = float(arms[arm] @ inverse @ arms[arm])
            n_pulls = int(self.options.switch / variance) + 1 if variance > 0 else recorder.remaining
            pulled, rewards = recorder.play(np.full(min(n_pulls, recorder.remaining), arm))
            state.add(arms[pulled], rewards)
        return recorder.finish(self.name, switch=self.options.switch, ridge=self.options.ridge)


class LinUCB(BanditAlgorithm):
    """Sequential OFUL/LinUCB (one pull per batch), Sherman–Morrison updates."""

    name = "linucb"

    class Options(StrictModel):
        ridge: float = Field(1.0, gt=0, description="ridge λ")
        theta_norm: float = Field(1.0, gt=0, description="S, the assumed bound on ‖θ‖")

    def play(self, arms: np.ndarray, recorder: Recorder) -> Trace:
        dim, ridge = arms.shape[1], self.options.ridge
        inverse, moment = np.eye(dim) / ridge, np.zeros(dim)
        log_delta = 2 * math.log(max(recorder.horizon, 2))
        noise_sd = recorder.bandit.noise_sd
        for t in range(recorder.horizon):
            beta = math.sqrt(ridge) * self.options.theta_norm + noise_sd * math.sqrt(
                log_delta + dim * math.log(1 + t / (ridge * dim))
            )
            projected = arms @ inverse
            ucb = arms @ (inverse @ moment) + beta * np.sqrt(np.maximum((projected * arms).sum(1), 0.0))
            arm = int(np.argmax(ucb))
            _, (reward,) = recorder.play(np.array([arm]))
            x = arms[arm]
            omega = inverse @ x
            inverse -= np.outer(omega, omega) / (1 + x @ omega)
            moment += reward * x
        return recorder.finish(self.name, ridge=ridge, theta_norm=self.options.theta_norm)
