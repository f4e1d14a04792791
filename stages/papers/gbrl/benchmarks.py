"""GBRL benchmarks (`icml25 bench gbrl`), one run, ratios against the named reference:

- PPO on CartPole-v1 (GBRL shared and separate trees at Table 2's settings, the MLP at RL-Zoo's): env steps
  per second while collecting and update seconds per PPO iteration, median over iterations, in interleaved
  order (reference: the MLP);
- the Table 1 one-tree update cost, gbrl vs XGBoost vs CatBoost on the same 128 × 20 batches (reference: gbrl).

Writes reports/benchmarks/gbrl.json.
"""

from __future__ import annotations

import os
import statistics
from pathlib import Path

import numpy as np

from stages.core.io import write_json

RESULTS_DIR = Path("reports/benchmarks")


def ppo_throughput(iterations: int = 4, repeats: int = 3, seed: int = 0) -> dict:
    """Median env steps/s and update seconds per iteration, GBRL and MLP, runs in a seeded random order."""
    import torch

    from stages.datasets.environments import EnvSpec
    from stages.methods.rl.run import train_policy
    from stages.papers.gbrl.params import GBRLParams

    torch.set_num_threads(1)
    policies = GBRLParams().tasks["cartpole"].policies
    seconds: dict[str, dict[str, list[float]]] = {
        name: {"steps_per_s": [], "update": []} for name in policies
    }
    rng = np.random.default_rng(seed)
    for repeat in range(repeats):
        for index in rng.permutation(len(policies)):
            name = list(policies)[index]
            policy = policies[name]
            steps = iterations * policy.ppo.n_envs * policy.ppo.n_steps
            _, result = train_policy(
                EnvSpec(env_id="CartPole-v1"), policy.model, "continuous", policy.ppo, steps, seed + repeat
            )
            batch = policy.ppo.n_envs * policy.ppo.n_steps
            seconds[name]["steps_per_s"] += [batch / s["rollout"] for s in result.seconds]
            seconds[name]["update"] += [s["update"] for s in result.seconds]
    medians = {
        name: {
            "env_steps_per_second": round(statistics.median(v["steps_per_s"]), 1),
            "update_seconds_per_iteration": round(statistics.median(v["update"]), 4),
        }
        for name, v in seconds.items()
    }
    ratios = {
        f"{name}_over_nn_{key}": round(medians[name][field] / medians["nn"][field], 3)
        for name in medians
        if name != "nn"
        for key, field in (
            ("steps_per_second", "env_steps_per_second"),
            ("update_seconds", "update_seconds_per_iteration"),
        )
    }
    return {"medians": medians, "ratios": ratios, "iterations": iterations, "repeats": repeats}


def table1(iterations: int = 200, repeats: int = 3) -> dict:
    """Seconds for `iterations` one-tree updates per library (medians of interleaved repeats), ratios to gbrl."""
    from stages.methods.rl.update_cost import LIBRARIES, update_seconds

    seconds = update_seconds(LIBRARIES, iterations, 128, 20, 3, 4, 0.1, repeats, 0)
    medians = {name: round(statistics.median(values), 3) for name, values in seconds.items()}
    return {
        "median_seconds": medians,
        "ratio_to_gbrl": {n: round(m / medians["gbrl"], 2) for n, m in medians.items()},
        "iterations": iterations,
        "repeats": repeats,
    }


def run_benchmarks() -> dict:
    """PPO-GBRL vs PPO-MLP throughput and the Table 1 update cost, one thread."""
    os.environ["OMP_NUM_THREADS"] = "1"
    result = {"ppo_cartpole": ppo_throughput(), "update_cost": table1()}
    write_json(result, RESULTS_DIR / "gbrl.json")
    return result
