"""A seeded synchronous vector of gymnasium environments that resets finished episodes itself.

Observations are stacked into one array: float32 for continuous spaces, object (strings) for categorical
features. Environment i is reset with seed `seed + i` once; later resets continue its own generator, so a run
is reproducible from one seed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass
class StepResult:
    """What one vector step returns; `final_observations[i]` is set where episode i was truncated."""

    observations: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    final_observations: dict[int, np.ndarray] = field(default_factory=dict)

    @property
    def dones(self) -> np.ndarray:
        return self.terminated | self.truncated


def stack(observations: Sequence[np.ndarray]) -> np.ndarray:
    """Stack per-env observations: object arrays stay object, numbers become float32."""
    first = np.asarray(observations[0])
    if first.dtype == object or first.dtype.kind in "US":
        return np.stack([np.asarray(o, dtype=object) for o in observations])
    return np.stack([np.asarray(o, dtype=np.float32) for o in observations])


class VectorEnv:
    """n environments stepped in lock-step; finished episodes are logged and reset at once."""

    def __init__(self, factory: Callable[[], object], n_envs: int, seed: int):
        if n_envs < 1:
            raise ValueError(f"n_envs {n_envs} must be ≥ 1")
        self.envs = [factory() for _ in range(n_envs)]
        self.seed = seed
        self.n_actions = int(self.envs[0].action_space.n)
        self._returns = np.zeros(n_envs)
        self._lengths = np.zeros(n_envs, dtype=np.int64)
        self.episodes: list[
            tuple[float, int, int]
        ] = []  # (return, length, env index) of each finished episode

    @property
    def n_envs(self) -> int:
        return len(self.envs)

    def reset(self) -> np.ndarray:
        return stack([env.reset(seed=self.seed + i)[0] for i, env in enumerate(self.envs)])

    def step(self, actions: np.ndarray) -> StepResult:
        observations, rewards = [], np.zeros(self.n_envs)
        terminated = np.zeros(self.n_envs, dtype=bool)
        truncated = np.zeros(self.n_envs, dtype=bool)
        finals: dict[int, np.ndarray] = {}
        for i, (env, action) in enumerate(zip(self.envs, actions, strict=True)):
            observation, reward, term, trunc, _ = env.step(int(action))
            rewards[i], terminated[i], truncated[i] = reward, term, trunc
            self._returns[i] += reward
            self._lengths[i] += 1
            if term or trunc:
                self.episodes.append((float(self._returns[i]), int(self._lengths[i]), i))
                self._returns[i], self._lengths[i] = 0.0, 0
                if trunc and not term:
                    finals[i] = observation
                observation, _ = env.reset()
            observations.append(observation)
        return StepResult(stack(observations), rewards, terminated, truncated, finals)

    def close(self) -> None:
        for env in self.envs:
            env.close()
