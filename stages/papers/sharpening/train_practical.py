"""Step `sharpening-train_practical`: deep linear and tanh MLPs on the same subsets, sharpness by Lanczos.

GD over architecture × N × depth × seed at one step size for the whole figure, η = 2·ratio/max Ŝ_D (the
largest Ŝ_D of the grid over N, depth and seed), plus SGD at `sgd_batch_size` on the middle N and depth with the
same η, to set against the matching GD run. One η (not one per cell) keeps a run that ends at the edge of
stability from tracking Ŝ_D by construction: there its S would be 2/η, the same in every cell.
"""

from __future__ import annotations

import itertools
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_parquet
from stages.core.progress import progress
from stages.methods.sharpness.theory import sharpness_bounds
from stages.papers.sharpening.data import load_subset, real_name
from stages.papers.sharpening.params import PracticalParams, SharpeningParams
from stages.papers.sharpening.practical import row_space_inputs, train_practical
from stages.papers.sharpening.threads import one_thread, one_thread_init


def middle(values: list[int]) -> int:
    """The middle value of a sorted list (the SGD comparison's N and depth)."""
    return sorted(values)[len(values) // 2]


def practical_settings(practical: PracticalParams) -> list[dict]:
    """GD runs over the grid, then the SGD comparison runs."""
    grid = [
        {"architecture": arch, "n": n, "depth": depth, "seed": seed, "sgd": False}
        for arch, n, depth, seed in itertools.product(
            practical.architectures, practical.n, practical.depth, practical.seeds
        )
    ]
    sgd = [
        {
            "architecture": arch,
            "n": middle(practical.n),
            "depth": middle(practical.depth),
            "seed": seed,
            "sgd": True,
        }
        for arch, seed in itertools.product(practical.architectures, practical.seeds)
    ]
    return grid + sgd


def figure_eta(subsets: pl.DataFrame, practical: PracticalParams) -> float:
    """The figure's one step size: η = 2·ratio/max Ŝ_D over the grid's N, depths and seeds."""
    largest = max(
        sharpness_bounds(*load_subset(subsets, real_name(n, seed)), depth).predicted
        for n, depth, seed in itertools.product(practical.n, practical.depth, practical.seeds)
    )
    return 2 * practical.ratio / largest


def run_one(
    x: np.ndarray, y: np.ndarray, setting: dict, practical: PracticalParams, eta: float
) -> tuple[dict, list[dict]]:
    """Train one network on (X, y) at the figure's step size `eta`; its row and trajectory."""
    bounds = sharpness_bounds(x, y, setting["depth"])
    batch = practical.sgd_batch_size if setting["sgd"] else setting["n"]
    result = train_practical(
        row_space_inputs(x),
        y,
        x.shape[1],
        setting["architecture"],
        practical.width,
        setting["depth"],
        eta,
        batch,
        setting["seed"],
        practical.loss_target,
        practical.max_steps,
        practical.every,
        practical.lanczos_tol,
        practical.lanczos_max_restarts,
    )
    run_id = f"{setting['architecture']}/n{setting['n']}/D{setting['depth']}/B{batch}/s{setting['seed']}"
    row = {
        "run_id": run_id,
        **setting,
        "batch_size": batch,
        "width": practical.width,
        "eta": eta,
        "threshold": 2 / eta,
        "difficulty": bounds.difficulty,
        "predicted": bounds.predicted,
        "lower": bounds.lower,
        "upper": bounds.upper,
        "status": result.status,
        "steps": result.steps,
        "final_loss": result.final_loss,
        "initial_sharpness": result.initial_sharpness,
        "final_sharpness": result.final_sharpness,
        "lanczos_converged": all(record["converged"] for record in result.records),
    }
    records = [
        {
            "run_id": run_id,
            "step": r["step"],
            "sharpness": r["sharpness"],
            "loss": r["loss"],
            "matvecs": r["matvecs"],
        }
        for r in result.records
    ]
    return row, records


def run_all(subsets: pl.DataFrame, practical: PracticalParams, workers: int) -> list[tuple[dict, list[dict]]]:
    """Every setting, each on one torch thread, in `workers` spawned processes (results do not depend on it)."""
    eta = figure_eta(subsets, practical)
    tasks = [
        (*load_subset(subsets, real_name(setting["n"], setting["seed"])), setting, practical, eta)
        for setting in practical_settings(practical)
    ]
    if workers <= 1:
        with one_thread():
            return [run_one(*task) for task in progress(tasks, desc="practical nets")]
    context = get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=one_thread_init) as pool:
        futures = [pool.submit(run_one, *task) for task in tasks]
        return [future.result() for future in progress(futures, desc="practical nets")]


def run(ctx: StepContext) -> None:
    """Train every practical network; write practical_runs.parquet and practical_trajectories.parquet."""
    params: SharpeningParams = ctx.params.effective()
    subsets = read_parquet(ctx.input("subsets"))
    results = run_all(subsets, params.practical, ctx.common.threads)
    rows = [row for row, _ in results]
    records = [record for _, trajectory in results for record in trajectory]
    runs = pl.DataFrame(rows)
    ctx.log(f"{runs.height} practical runs; converged {int((runs['status'] == 'converged').sum())}")
    write_parquet(runs, ctx.output("runs"))
    write_parquet(pl.DataFrame(records), ctx.output("trajectories"))
