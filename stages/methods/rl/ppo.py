"""The PPO loop (Schulman et al. 2017) over any `ActorCritic`: rollout, GAE, minibatch epochs of the clipped
loss. One `step` per minibatch: one Adam step for a network, one new tree for GBRL.

Truncated episodes (a time limit, not a terminal state) bootstrap: their last reward gets γ·V(final state).
Wall-clock seconds are returned apart from the data (`TrainResult.seconds`), so callers can keep them out
of data outputs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from stages.methods.rl.actor_critic import ActorCritic
from stages.methods.rl.config import PPOConfig
from stages.methods.rl.encoders import Encoder
from stages.methods.rl.gae import gae
from stages.methods.rl.losses import ppo_loss
from stages.methods.rl.vector import VectorEnv


@dataclass
class TrainResult:
    """Finished episodes (return, length, env steps when it ended), per-iteration losses and seconds."""

    episodes: list[tuple[float, int, int]] = field(default_factory=list)
    losses: list[dict[str, float]] = field(default_factory=list)
    seconds: list[dict[str, float]] = field(default_factory=list)
    env_steps: int = 0

    def score(self, last: int = 100) -> float:
        """Mean return of the last `last` training episodes (the paper's score); NaN before any episode."""
        returns = [episode[0] for episode in self.episodes[-last:]]
        return float(np.mean(returns)) if returns else float("nan")


@dataclass
class Rollout:
    observations: np.ndarray  # (steps, envs, d) encoded
    actions: np.ndarray
    log_probs: np.ndarray
    values: np.ndarray
    rewards: np.ndarray
    starts: np.ndarray


def collect(
    env: VectorEnv,
    model: ActorCritic,
    encoder: Encoder,
    observations: np.ndarray,
    starts: np.ndarray,
    config: PPOConfig,
    generator: torch.Generator,
) -> tuple[Rollout, np.ndarray, np.ndarray]:
    """`n_steps` vector steps from `observations`; returns the rollout and the next observations and starts."""
    steps: dict[str, list[np.ndarray]] = {
        k: [] for k in ("obs", "actions", "log_probs", "values", "rewards", "starts")
    }
    for _ in range(config.n_steps):
        encoded = encoder(observations)
        actions, log_probs, values = model.act(encoded, generator)
        result = env.step(actions)
        rewards = result.rewards.copy()
        for index, final in result.final_observations.items():
            rewards[index] += config.gamma * model.values(encoder(np.asarray(final)[None]))[0]
        for key, value in zip(steps, (encoded, actions, log_probs, values, rewards, starts), strict=True):
            steps[key].append(value)
        observations, starts = result.observations, result.dones
    rollout = Rollout(*(np.stack(steps[key]) for key in steps))
    return rollout, observations, starts


def update(
    model: ActorCritic,
    rollout: Rollout,
    advantages: np.ndarray,
    returns: np.ndarray,
    config: PPOConfig,
    rng: np.random.Generator,
    remaining: float = 1.0,
) -> dict[str, float]:
    """`epochs` passes over the rollout in shuffled minibatches; the mean of each loss part. `remaining`: the
    fraction of the run left (SB3's progress_remaining), which a linear clip schedule scales the clip by."""
    clip = config.clip_range * (max(remaining, 0.0) if config.clip_schedule == "linear" else 1.0)
    value_scale = 0.5 if config.value_loss == "half_mse" else 1.0
    n = advantages.size
    observations = rollout.observations.reshape(n, *rollout.observations.shape[2:])
    actions = torch.as_tensor(rollout.actions.reshape(n), dtype=torch.long)
    old_log_probs = torch.as_tensor(rollout.log_probs.reshape(n), dtype=torch.float32)
    flat_advantages = torch.as_tensor(advantages.reshape(n), dtype=torch.float32)
    flat_returns = torch.as_tensor(returns.reshape(n), dtype=torch.float32)
    parts: dict[str, list[float]] = {"policy": [], "value": [], "entropy": [], "clip_fraction": []}
    for _ in range(config.epochs):
        order = rng.permutation(n)
        for begin in range(0, n, config.batch_size):
            index = order[begin : begin + config.batch_size]
            batch_advantages = flat_advantages[index]
            if config.normalize_advantage and len(index) > 1:
                batch_advantages = (batch_advantages - batch_advantages.mean()) / (
                    batch_advantages.std() + 1e-8
                )
            log_prob, entropy, values = model.evaluate(observations[index], actions[index])
            loss = ppo_loss(
                log_prob,
                old_log_probs[index],
                batch_advantages,
                values,
                flat_returns[index],
                entropy,
                clip,
                config.ent_coef,
                config.vf_coef,
                value_scale,
            )
            loss.total.backward()
            model.step()
            for key in parts:
                parts[key].append(getattr(loss, key))
    return {key: float(np.mean(values)) for key, values in parts.items()}


def train(
    env: VectorEnv,
    model: ActorCritic,
    encoder: Encoder,
    config: PPOConfig,
    total_steps: int,
    seed: int,
    on_iteration: Callable[[int, TrainResult], None] | None = None,
) -> TrainResult:
    """PPO for at least `total_steps` environment steps (whole rollouts); seeded by `seed`."""
    if env.n_envs != config.n_envs:
        raise ValueError(f"the vector has {env.n_envs} environments, the config {config.n_envs}")
    generator = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    result = TrainResult()
    observations, starts = env.reset(), np.ones(env.n_envs, dtype=bool)
    iterations = -(-total_steps // (config.n_envs * config.n_steps))
    for iteration in range(iterations):
        started = time.perf_counter()
        seen = len(env.episodes)
        rollout, observations, starts = collect(env, model, encoder, observations, starts, config, generator)
        result.env_steps += config.n_envs * config.n_steps
        result.episodes += [(r, n, result.env_steps) for r, n, _ in env.episodes[seen:]]
        advantages, returns = gae(
            rollout.rewards,
            rollout.values,
            rollout.starts,
            model.values(encoder(observations)),
            starts,
            config.gamma,
            config.gae_lambda,
        )
        collected = time.perf_counter()
        remaining = 1.0 - result.env_steps / total_steps  # SB3: after the rollout, before the update
        model.set_progress(remaining)
        result.losses.append(update(model, rollout, advantages, returns, config, rng, remaining))
        result.seconds.append({"rollout": collected - started, "update": time.perf_counter() - collected})
        if on_iteration is not None:
            on_iteration(iteration, result)
    return result


def evaluate(
    env: VectorEnv,
    model: ActorCritic,
    encoder: Encoder,
    episodes: int,
    seed: int,
    deterministic: bool = False,
) -> list[float]:
    """Returns of `episodes` episodes, the first ⌈episodes / n_envs⌉ of each environment (so short episodes
    are not favoured by finishing first), actions sampled unless `deterministic`."""
    if episodes < 1:
        raise ValueError(f"episodes {episodes} must be ≥ 1")
    quota = -(-episodes // env.n_envs)
    generator = torch.Generator().manual_seed(seed)
    observations = env.reset()
    env.episodes = []
    done = np.zeros(env.n_envs, dtype=np.int64)
    while done.min() < quota:
        actions, _, _ = model.act(encoder(observations), generator, deterministic)
        observations = env.step(actions).observations
        done = np.bincount([e[2] for e in env.episodes], minlength=env.n_envs)
    kept = [[e[0] for e in env.episodes if e[2] == i][:quota] for i in range(env.n_envs)]
    return [value for per_env in kept for value in per_env][:episodes]
