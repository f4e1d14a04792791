"""Train PPO on any gymnasium environment spec with either actor-critic: the one-call Python API.

from stages.datasets.environments import EnvSpec
from stages.methods.rl.config import GBRLConfig, PPOConfig
from stages.methods.rl.run import train_policy

model, result = train_policy(EnvSpec(env_id="CartPole-v1"), GBRLConfig(), "continuous", PPOConfig(), 20_000, seed=0)
model.save("cartpole_gbrl")
"""

from __future__ import annotations

import numpy as np

from stages.datasets.environments import EnvSpec, make_env
from stages.methods.rl.actor_critic import ActorCritic
from stages.methods.rl.config import GBRLConfig, MLPConfig, ModelConfig, PPOConfig
from stages.methods.rl.encoders import Encoder, build_encoder
from stages.methods.rl.ppo import TrainResult, evaluate, train
from stages.methods.rl.vector import VectorEnv


def make_vector(spec: EnvSpec, n_envs: int, seed: int, key: str = "env") -> VectorEnv:
    """`n_envs` copies of the spec's environment; copy i is reset with seed `seed + i`."""
    make_env(spec, key).close()  # fail early, naming the key, on an unknown id or wrapper
    return VectorEnv(lambda: make_env(spec, key), n_envs, seed)


def build_model(config: ModelConfig, input_dim: int, n_actions: int, seed: int) -> ActorCritic:
    """The actor-critic a config describes."""
    if isinstance(config, GBRLConfig):
        from stages.methods.rl.gbrl_ac import GBRLActorCritic

        return GBRLActorCritic(config, input_dim, n_actions)
    if isinstance(config, MLPConfig):
        from stages.methods.rl.mlp_ac import MLPActorCritic

        return MLPActorCritic(
            input_dim,
            n_actions,
            tuple(config.hidden),
            config.lr,
            config.max_grad_norm,
            seed,
            shared_trunk=config.shared_trunk,
            ortho_init=config.ortho_init,
            lr_schedule=config.lr_schedule,
        )
    raise TypeError(f"unknown actor-critic config {type(config).__name__}")


def model_for(env: VectorEnv, config: ModelConfig, encoder: Encoder, seed: int) -> ActorCritic:
    """A fresh actor-critic sized for the environment's encoded observations and actions."""
    sample, _ = env.envs[0].reset(seed=seed)
    return build_model(
        config,
        encoder.dim(np.asarray(sample, dtype=object if _is_text(sample) else None)),
        env.n_actions,
        seed,
    )


def _is_text(observation) -> bool:
    array = np.asarray(observation)
    return array.dtype == object or array.dtype.kind in "US"


def train_policy(
    spec: EnvSpec, config: ModelConfig, encoder: str, ppo: PPOConfig, total_steps: int, seed: int
) -> tuple[ActorCritic, TrainResult]:
    """Train a fresh actor-critic on `spec` with PPO; returns the model and the training record."""
    env = make_vector(spec, ppo.n_envs, seed)
    coder = build_encoder(encoder)
    model = model_for(env, config, coder, seed)
    try:
        result = train(env, model, coder, ppo, total_steps, seed)
    finally:
        env.close()
    return model, result


def evaluate_policy(
    spec: EnvSpec, model: ActorCritic, encoder: str, episodes: int, n_envs: int, seed: int
) -> list[float]:
    """Returns of `episodes` episodes of `model` on `spec` (e.g. with an `input_noise` wrapper)."""
    env = make_vector(spec, n_envs, seed)
    try:
        return evaluate(env, model, build_encoder(encoder), episodes, seed)
    finally:
        env.close()
