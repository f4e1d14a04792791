"""Step `blae-simulate`: every cell × seed × algorithm on the same instance per (cell, seed).

Each (cell, seed) draws one instance (arms and θ); every algorithm plays it with its own noise stream, so
comparisons are paired by seed. Writes a summary row per run, cumulative-regret curves at `curve_points`
checkpoints, each run's batch ends, and the wall times (only in `timings/simulate.json`).
"""

from __future__ import annotations

import json

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import write_json, write_parquet
from stages.core.progress import progress
from stages.core.seeding import derive_seed
from stages.methods.bandits.environment import INSTANCES, LinearBandit, shuffled
from stages.methods.bandits.registry import ALGORITHMS
from stages.methods.bandits.trace import Trace
from stages.papers.blae.params import BLAEParams, Cell, Grid


def instance(cell: Cell, seed: int, base_seed: int, noise_sd: float) -> LinearBandit:
    """The (cell, seed) instance, the same for every algorithm, its arms in a random order (so that no
    algorithm's tie-breaking or index-ordered play can favour the arm a generator puts first)."""
    rng = np.random.default_rng(derive_seed(base_seed, "blae", cell.label, seed))
    bandit = INSTANCES[cell.arms](cell.n_arms, cell.dim, rng)
    return shuffled(LinearBandit(bandit.arms, bandit.theta, noise_sd), rng)


def algorithms_for(cell: Cell, grid: Grid, labels: list[str]) -> list[str]:
    """The algorithm labels run in a cell (E4 only up to `e4_max_arms` arms)."""
    limit = grid.e4_max_arms
    return [label for label in labels if not (label == "e4" and limit is not None and cell.n_arms > limit)]


def checkpoints(horizon: int, points: int) -> np.ndarray:
    """Distinct pull counts 1..T, evenly spaced, T included."""
    return np.unique(np.linspace(1, horizon, min(points, horizon)).round().astype(np.int64))


def summary_row(cell: Cell, seed: int, label: str, trace: Trace, eliminates: bool) -> dict:
    return {
        "cell": cell.label,
        "arms": cell.arms,
        "n_arms": cell.n_arms,
        "dim": cell.dim,
        "horizon": trace.horizon,
        "seed": seed,
        "algorithm": label,
        "final_regret": trace.final_regret,
        "batches": trace.n_batches,
        "survivors": len(trace.survivors),
        "best_arm_eliminated": trace.best_arm_eliminated if eliminates else None,
        "best_arm_index": trace.best_arm,
        "info": json.dumps({k: v for k, v in trace.info.items() if k != "epsilons"}, sort_keys=True),
    }


def simulate(
    params: BLAEParams, base_seed: int
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, list[dict]]:
    """Run the grid; returns (runs, curves, batches, timings)."""
    grid = params.grid
    rows, curves, batches, timings = [], [], [], []
    jobs = [(cell, seed) for cell in grid.cells for seed in grid.seeds]
    points = checkpoints(grid.horizon, params.curve_points)
    for cell, seed in progress(jobs, "blae cells × seeds"):
        bandit = instance(cell, seed, base_seed, params.noise_sd)
        for label in algorithms_for(cell, grid, list(params.algorithms)):
            entry = params.algorithms[label]
            algorithm = ALGORITHMS.build(
                entry.algorithm, entry.options, key=f"blae.algorithms.{label}.options"
            )
            rng = np.random.default_rng(derive_seed(base_seed, "blae", cell.label, seed, label))
            trace = algorithm.run(bandit, grid.horizon, rng)
            rows.append(summary_row(cell, seed, label, trace, algorithm.eliminates))
            key = {"cell": cell.label, "seed": seed, "algorithm": label}
            curves.append(
                pl.DataFrame({**key, "t": points, "cumulative_regret": trace.cumulative_regret[points - 1]})
            )
            batches.append(
                pl.DataFrame({**key, "batch": np.arange(trace.n_batches), "end": trace.batch_ends})
            )
            timings.append({**key, "seconds": round(trace.seconds, 6)})
    return pl.DataFrame(rows), pl.concat(curves), pl.concat(batches), timings


def run(ctx: StepContext) -> None:
    params: BLAEParams = ctx.params
    runs, curves, batches, timings = simulate(params, ctx.common.seed)
    ctx.log(f"{runs.height} runs over {len(params.grid.cells)} cells, T = {params.grid.horizon}")
    write_parquet(runs, ctx.output("runs"))
    write_parquet(curves, ctx.output("curves"))
    write_parquet(batches, ctx.output("batches"))
    write_json({"scale": params.scale, "runs": timings}, ctx.output("timings"))
