"""The interface every bandit algorithm implements, and the estimation pieces they share."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np

from stages.core.params import StrictModel
from stages.methods.bandits.environment import LinearBandit
from stages.methods.bandits.trace import Recorder, Trace


class BanditAlgorithm(ABC):
    """A (batched) linear bandit policy: `run(bandit, horizon, rng)` plays T pulls and returns a Trace.

    Subclasses set `name`, an `Options` model (validated by the registry, naming the key) and implement
    :meth:`play`, which only ever sees rewards through the :class:`Recorder` (never θ).
    """

    name: ClassVar[str]
    Options: ClassVar[type[StrictModel]]
    eliminates: ClassVar[bool] = False
    """Whether the algorithm drops arms (then best-arm survival is meaningful)."""

    def __init__(self, options: StrictModel | None = None) -> None:
        self.options = options if options is not None else self.Options()

    def prepare(self) -> None:
        """Load what the algorithm needs (imports, solvers) so that it is not timed as part of a run."""
        return None

    def run(self, bandit: LinearBandit, horizon: int, rng: np.random.Generator) -> Trace:
        """Play `horizon` pulls; the trace carries the wall time in `seconds` (after :meth:`prepare`)."""
        self.prepare()
        started = time.perf_counter()
        recorder = Recorder(bandit, horizon, rng)
        trace = self.play(bandit.arms, recorder)
        trace.seconds = time.perf_counter() - started
        return trace

    @abstractmethod
    def play(self, arms: np.ndarray, recorder: Recorder) -> Trace:
        """Play until `recorder.remaining` is 0 and return `recorder.finish(...)`."""


class RidgeState:
    """Cumulative ridge regression: V = λI + Σ x xᵀ, b = Σ x y, θ̂ = V⁻¹ b."""

    def __init__(self, dim: int, ridge: float) -> None:
        self.gram = ridge * np.eye(dim)
        self.moment = np.zeros(dim)

    def add(self, features: np.ndarray, rewards: np.ndarray) -> None:
        self.gram += features.T @ features
        self.moment += features.T @ rewards

    def theta(self) -> np.ndarray:
        return np.linalg.solve(self.gram, self.moment)

    def inverse(self) -> np.ndarray:
        return np.linalg.inv(self.gram)


def ridge_estimate(features: np.ndarray, rewards: np.ndarray, ridge: float) -> np.ndarray:
    """θ̂ = (XᵀX + λI)⁻¹ Xᵀy on these pulls only."""
    state = RidgeState(features.shape[1], ridge)
    state.add(features, rewards)
    return state.theta()


def pulls_in_order(active: np.ndarray, counts: np.ndarray, limit: int) -> np.ndarray:
    """Arm indices to play: active[i] repeated counts[i] times, arm by arm (the batch is fixed up front),
    cut after `limit` pulls (what is left of the horizon).

    Used as it is only where the counts fit the budget: a phase that asks for more than what is left, cut
    this way, plays the lowest-indexed arms only (the E4 code's quirk, kept as `final_phase: cut`)."""
    cumulative = np.minimum(np.cumsum(counts), limit)
    return np.repeat(active, np.diff(cumulative, prepend=0))


def spread_counts(counts: np.ndarray, budget: int) -> np.ndarray:
    """`counts` scaled to sum to at most `budget`: unchanged when they fit, else the budget shared in
    proportion to them (⌈budget·c/Σc⌉, the excess taken from the largest; every arm the design supports keeps
    its share whatever its index)."""
    from stages.methods.bandits.design import round_allocation

    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    if total <= budget:
        return counts
    if budget <= 0:
        return np.zeros_like(counts)
    return round_allocation(counts / total, int(budget))


def phase_pulls(
    active: np.ndarray, counts: np.ndarray, remaining: int, final_phase: str = "spread"
) -> np.ndarray:
    """The pulls of one design phase within what is left of the horizon: `spread` shares the remaining
    budget by the design when the phase asks for more (:func:`spread_counts`), `cut` plays arm by arm in index
    order and stops at T (the E4 authors' code)."""
    if final_phase == "spread":
        return np.repeat(active, spread_counts(counts, remaining))
    return pulls_in_order(active, counts, remaining)
