"""Observation wrappers for the RL environments of `stages.datasets.environments` (imports gymnasium)."""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces

MAX_CATEGORY_BYTES = 128
VIEW_CELLS = 49  # MiniGrid's default 7×7 partial view


def _names() -> tuple[dict[int, str], dict[int, str], dict[int, str]]:
    from minigrid.core.constants import IDX_TO_COLOR, IDX_TO_OBJECT, STATE_TO_IDX

    return IDX_TO_OBJECT, IDX_TO_COLOR, {index: name for name, index in STATE_TO_IDX.items()}


def encode_minigrid(observation: dict) -> np.ndarray:
    """51 strings: each of the 49 view cells as "object,color,state", the direction, the mission text."""
    objects, colors, states = _names()
    image = np.asarray(observation["image"])
    cells = [
        f"{objects[int(o)]},{colors[int(c)]},{states[int(s)]}"
        for o, c, s in image.transpose(1, 0, 2).reshape(-1, 3)
    ]
    mission = str(observation["mission"])
    if len(mission.encode()) > MAX_CATEGORY_BYTES:
        raise ValueError(
            f"mission {mission!r} is longer than {MAX_CATEGORY_BYTES} bytes (GBRL's category limit)"
        )
    return np.array([*cells, str(int(observation["direction"])), mission], dtype=object)


class CategoricalObsWrapper(gymnasium.ObservationWrapper):
    """MiniGrid's dict observation → a 1-D object array of 51 categorical strings (GBRL's input)."""

    def __init__(self, env: gymnasium.Env):
        super().__init__(env)
        image = env.observation_space["image"]
        if image.shape[0] * image.shape[1] != VIEW_CELLS:
            raise ValueError(f"minigrid_categorical expects a 7×7 view, got {image.shape[:2]}")
        self.observation_space = spaces.Sequence(spaces.Text(MAX_CATEGORY_BYTES))

    def observation(self, observation: dict) -> np.ndarray:
        return encode_minigrid(observation)


class InputNoiseWrapper(gymnasium.ObservationWrapper):
    """s → s + ε·|s| with one ε ~ N(0, σ) per step (reset observations included).

    The noise generator is seeded by (`seed`, the reset seed) whenever the environment is reset with a seed,
    so copies of one environment reset with different seeds draw different noise.
    """

    def __init__(self, env: gymnasium.Env, sigma: float, seed: int = 0):
        super().__init__(env)
        if sigma < 0:
            raise ValueError(f"input_noise: sigma {sigma} must be ≥ 0")
        if not isinstance(env.observation_space, spaces.Box):
            raise ValueError("input_noise needs a continuous (Box) observation space")
        self.sigma = float(sigma)
        self.seed = int(seed)
        self.rng = np.random.default_rng(self.seed)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self.rng = np.random.default_rng([self.seed, int(seed)])
        return super().reset(seed=seed, options=options)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        epsilon = self.rng.normal(0.0, self.sigma) if self.sigma > 0 else 0.0
        return (observation + epsilon * np.abs(observation)).astype(observation.dtype)
