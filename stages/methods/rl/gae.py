"""Generalised advantage estimation (Schulman et al. 2016) over a rollout of shape (steps, envs)."""

from __future__ import annotations

import numpy as np


def gae(
    rewards: np.ndarray,
    values: np.ndarray,
    episode_starts: np.ndarray,
    last_values: np.ndarray,
    last_dones: np.ndarray,
    gamma: float,
    lam: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Advantages and returns (advantage + value), all arrays shaped (steps, envs).

    `episode_starts[t]` marks that the observation at step t began a new episode (so nothing flows back from
    step t to step t − 1); `last_dones` marks that the observation after the last step began one.
    δ_t = r_t + γ V(s_{t+1}) (1 − done_{t+1}) − V(s_t);  A_t = δ_t + γ λ (1 − done_{t+1}) A_{t+1}.
    """
    steps = rewards.shape[0]
    if not (values.shape == rewards.shape == episode_starts.shape):
        raise ValueError(
            f"rewards {rewards.shape}, values {values.shape}, starts {episode_starts.shape} differ"
        )
    advantages = np.zeros_like(rewards, dtype=np.float64)
    running = np.zeros(rewards.shape[1], dtype=np.float64)
    for t in reversed(range(steps)):
        if t == steps - 1:
            not_done, next_values = 1.0 - last_dones.astype(np.float64), last_values
        else:
            not_done, next_values = 1.0 - episode_starts[t + 1].astype(np.float64), values[t + 1]
        delta = rewards[t] + gamma * next_values * not_done - values[t]
        running = delta + gamma * lam * not_done * running
        advantages[t] = running
    return advantages, advantages + values
