"""What a bandit run leaves behind: every pull's arm, reward, pseudo-regret and batch, plus eliminations.

A batched policy fixes its pulls before seeing the batch's rewards, so :class:`Recorder.play` takes a whole
batch of arm indices, draws their rewards at once and records them; each non-empty call is one batch. Wall
time is kept on the trace (`seconds`) but never written into data outputs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from stages.methods.bandits.environment import LinearBandit

NOT_ELIMINATED = -1


@dataclass
class Trace:
    """One run: per pull `arms`, `rewards`, `regret` (instantaneous pseudo-regret) and `batch` (0-based);
    `eliminated_at[a]` is the batch after which arm a was dropped (−1: never); `survivors` are the arms still
    active at the end (every arm for algorithms that do not eliminate)."""

    algorithm: str
    arms: np.ndarray
    rewards: np.ndarray
    regret: np.ndarray
    batch: np.ndarray
    eliminated_at: np.ndarray
    survivors: np.ndarray
    best_arm: int
    info: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def horizon(self) -> int:
        return len(self.arms)

    @property
    def n_batches(self) -> int:
        """Number of batches (policy changes + 1) the run used."""
        return int(self.batch[-1]) + 1 if len(self.batch) else 0

    @property
    def batch_ends(self) -> np.ndarray:
        """Number of pulls made by the end of each batch."""
        return np.flatnonzero(np.diff(self.batch, append=self.batch[-1] + 1)) + 1

    @property
    def cumulative_regret(self) -> np.ndarray:
        return np.cumsum(self.regret)

    @property
    def final_regret(self) -> float:
        return float(self.regret.sum())

    @property
    def best_arm_eliminated(self) -> bool:
        """Whether the best arm was dropped (or not among the survivors)."""
        return bool(
            self.eliminated_at[self.best_arm] != NOT_ELIMINATED or self.best_arm not in self.survivors
        )

    def to_frame(self) -> pl.DataFrame:
        """One row per pull: t (1-based), arm, reward, regret, cumulative_regret, batch."""
        return pl.DataFrame(
            {
                "t": np.arange(1, self.horizon + 1, dtype=np.int64),
                "arm": self.arms.astype(np.int64),
                "reward": self.rewards,
                "regret": self.regret,
                "cumulative_regret": self.cumulative_regret,
                "batch": self.batch.astype(np.int64),
            }
        )


class Recorder:
    """Plays batches on a bandit until the horizon and builds the :class:`Trace`."""

    def __init__(self, bandit: LinearBandit, horizon: int, rng: np.random.Generator) -> None:
        self.bandit, self.horizon, self.rng = bandit, int(horizon), rng
        self._arms: list[np.ndarray] = []
        self._rewards: list[np.ndarray] = []
        self.pulls = 0
        self.eliminated_at = np.full(bandit.n_arms, NOT_ELIMINATED, dtype=np.int64)

    @property
    def remaining(self) -> int:
        return self.horizon - self.pulls

    @property
    def batches(self) -> int:
        return len(self._arms)

    def play(self, arms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pull `arms` (indices, in order) as one batch, cut at the horizon; returns the arms actually pulled
        and their rewards. An empty batch (or none left) records nothing."""
        arms = np.asarray(arms, dtype=np.int64)[: self.remaining]
        if len(arms) == 0:
            return arms, np.zeros(0)
        rewards = self.bandit.rewards(arms, self.rng)
        self._arms.append(arms)
        self._rewards.append(rewards)
        self.pulls += len(arms)
        return arms, rewards

    def eliminate(self, arms: np.ndarray) -> None:
        """Mark `arms` as dropped after the latest batch."""
        self.eliminated_at[np.asarray(arms, dtype=np.int64)] = self.batches - 1

    def finish(self, algorithm: str, survivors: np.ndarray | None = None, **info: Any) -> Trace:
        """The trace of everything played (the caller must have used the whole horizon)."""
        if self.remaining:
            raise RuntimeError(f"{algorithm} stopped with {self.remaining} of {self.horizon} pulls unplayed")
        arms = np.concatenate(self._arms)
        batch = np.repeat(np.arange(len(self._arms)), [len(a) for a in self._arms])
        survivors = np.arange(self.bandit.n_arms) if survivors is None else np.asarray(survivors)
        return Trace(
            algorithm=algorithm,
            arms=arms,
            rewards=np.concatenate(self._rewards),
            regret=self.bandit.gaps[arms],
            batch=batch,
            eliminated_at=self.eliminated_at.copy(),
            survivors=np.sort(survivors),
            best_arm=self.bandit.best_arm,
            info=info,
        )
