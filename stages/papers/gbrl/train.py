"""Step `gbrl-train`: every task × policy × seed trained with PPO (one torch thread per run, runs spread over
`common.threads` spawned processes; the results do not depend on it). Writes the runs table, every finished
episode (the return curves), the models, and the wall-clock seconds under `timings/`."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import polars as pl

from stages.core.context import StepContext
from stages.core.io import write_json, write_parquet
from stages.core.progress import progress
from stages.papers.gbrl.params import GBRLParams
from stages.papers.gbrl.runs import random_play, train_run


def _one_thread() -> None:
    os.environ["OMP_NUM_THREADS"] = "1"
    import torch

    torch.set_num_threads(1)


def train_all(params: GBRLParams, base_seed: int, models: Path, workers: int) -> list[dict]:
    """Every run, in a fixed order whatever the number of workers (submitted last policy first, which puts
    the slow network runs at the front of the queue), then the random-play runs of every task and seed."""
    runs = params.runs()
    if workers <= 1:
        results = [train_run(params, *run, base_seed, models) for run in progress(runs, desc="gbrl runs")]
    else:
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=_one_thread) as pool:
            futures = {run: pool.submit(train_run, params, *run, base_seed, models) for run in reversed(runs)}
            results = [futures[run].result() for run in progress(runs, desc="gbrl runs")]
    grid = params.grid
    return results + [
        random_play(params, task, seed, base_seed) for task in grid.steps for seed in grid.seeds
    ]


def tables(results: list[dict]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The runs table (one row per run) and the curves table (one row per finished training episode)."""
    runs = pl.DataFrame(
        [
            {
                "task": r["task"],
                "policy": r["policy"],
                "seed": r["seed"],
                "score": r["score"],
                "episodes": r.get("episode_count", len(r["episodes"])),
                "env_steps": r["env_steps"],
                "trees": r["size"].get("trees", 0),
                "parameters": r["size"].get("parameters", 0),
                "model_bytes": r["size"].get("model_bytes", 0),
            }
            for r in results
        ]
    )
    curves = pl.DataFrame(
        [
            {
                "task": r["task"],
                "policy": r["policy"],
                "seed": r["seed"],
                "episode": index,
                "env_step": step,
                "return": ret,
                "length": length,
            }
            for r in results
            for index, (ret, length, step) in enumerate(r["episodes"])
        ],
        schema={
            "task": pl.String,
            "policy": pl.String,
            "seed": pl.Int64,
            "episode": pl.Int64,
            "env_step": pl.Int64,
            "return": pl.Float64,
            "length": pl.Int64,
        },
    )
    return runs, curves


def run(ctx: StepContext) -> None:
    params: GBRLParams = ctx.params
    models = ctx.output("models")
    models.mkdir(parents=True, exist_ok=True)
    workers = params.grid.workers or ctx.common.threads
    results = train_all(params, ctx.common.seed, models, workers)
    runs, curves = tables(results)
    for row in runs.iter_rows(named=True):
        ctx.log(
            f"{row['task']} {row['policy']} seed {row['seed']}: score {row['score']:.3f}, "
            f"{row['episodes']} episodes, {row['trees']} trees"
        )
    write_parquet(runs, ctx.output("runs"))
    write_parquet(curves, ctx.output("curves"))
    timings = [
        {
            "task": r["task"],
            "policy": r["policy"],
            "seed": r["seed"],
            "env_steps": r["env_steps"],
            "iterations": len(r["seconds"]),
            "rollout_seconds": [s["rollout"] for s in r["seconds"]],
            "update_seconds": [s["update"] for s in r["seconds"]],
        }
        for r in results
        if r["policy"] != "random"
    ]
    write_json({"runs": timings, "workers": workers}, ctx.output("timings"))
