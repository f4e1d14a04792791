"""One training run of the GBRL paper (task × policy × seed), callable in a worker process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stages.core.seeding import derive_seed
from stages.datasets.environments import EnvSpec
from stages.methods.rl.actor_critic import ActorCritic
from stages.methods.rl.encoders import build_encoder
from stages.methods.rl.ppo import train
from stages.methods.rl.run import make_vector, model_for
from stages.papers.gbrl.params import GBRLParams, PolicyParams


def env_spec(env_id: str, policy: PolicyParams) -> EnvSpec:
    """The environment a policy sees: the task's id with the policy's wrappers."""
    return EnvSpec(env_id=env_id, wrappers=policy.wrappers)


def run_seed(base_seed: int, task: str, seed: int) -> int:
    """The seed of one run, shared by every policy of the task at that seed (paired: the same environment
    resets, the same sampling generator, the same initial network weights); stable under adding tasks,
    policies or seeds."""
    return derive_seed(base_seed, "gbrl", task, seed) % (2**31 - 1)


def model_stem(task: str, label: str, seed: int) -> str:
    return f"{task}-{label}-seed{seed}"


def fresh_model(params: GBRLParams, task: str, label: str, seed: int, base_seed: int) -> ActorCritic:
    """An untrained actor-critic of the run's configuration (to load a checkpoint into)."""
    policy = params.policy(task, label)
    env = make_vector(env_spec(params.tasks[task].env_id, policy), 1, 0, key=f"gbrl.tasks.{task}")
    try:
        return model_for(env, policy.model, build_encoder(policy.encoder), run_seed(base_seed, task, seed))
    finally:
        env.close()


def train_run(
    params: GBRLParams, task: str, label: str, seed: int, base_seed: int, models: Path
) -> dict[str, Any]:
    """Train one run, save its model under `models`, return its episodes, size and seconds."""
    import torch

    torch.set_num_threads(1)
    policy = params.policy(task, label)
    run_seed_ = run_seed(base_seed, task, seed)
    env = make_vector(
        env_spec(params.tasks[task].env_id, policy), policy.ppo.n_envs, run_seed_, key=f"gbrl.tasks.{task}"
    )
    encoder = build_encoder(policy.encoder)
    model = model_for(env, policy.model, encoder, run_seed_)
    try:
        result = train(env, model, encoder, policy.ppo, params.grid.steps[task], run_seed_)
    finally:
        env.close()
    stem = model_stem(task, label, seed)
    model.save(models / stem)
    return {
        "task": task,
        "policy": label,
        "seed": seed,
        "episodes": result.episodes,
        "score": result.score(),
        "env_steps": result.env_steps,
        "size": {**model.size(), "model_bytes": model_bytes(models, stem)},
        "seconds": result.seconds,
    }


def model_bytes(models: Path, stem: str) -> int:
    """Bytes of a saved model: every file of its stem (gbrl's shared file, or its policy and value files)."""
    files = [*models.glob(f"{stem}.*"), *models.glob(f"{stem}_*"), *models.glob(stem)]
    return int(sum(path.stat().st_size for path in set(files) if path.is_file()))


def random_play(params: GBRLParams, task: str, seed: int, base_seed: int) -> dict[str, Any]:
    """A uniform-random policy on the task: the mean return of `grid.random_episodes` episodes (the level a
    trained policy must leave; seeded per task and seed)."""
    import numpy as np

    from stages.datasets.environments import make_env
    from stages.methods.rl.vector import VectorEnv

    spec = EnvSpec(env_id=params.tasks[task].env_id)
    episodes = params.grid.random_episodes
    run_seed_ = derive_seed(base_seed, "gbrl", task, "random", seed) % (2**31 - 1)
    env = VectorEnv(lambda: make_env(spec, f"gbrl.tasks.{task}"), 1, run_seed_)
    rng = np.random.default_rng(run_seed_)
    steps = 0
    try:
        env.reset()
        while len(env.episodes) < episodes:
            env.step(rng.integers(env.n_actions, size=1))
            steps += 1
    finally:
        env.close()
    returns = [episode[0] for episode in env.episodes[:episodes]]
    return {
        "task": task,
        "policy": "random",
        "seed": seed,
        "episodes": [],
        "score": float(np.mean(returns)),
        "episode_count": len(returns),
        "env_steps": steps,
        "size": {},
        "seconds": [],
    }
