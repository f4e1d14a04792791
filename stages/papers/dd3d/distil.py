"""Step `dd3d-distil`: every distilled set of the design, per seed.

DD3D (generator) in each setting at cpc 1 and in `many_cpc_settings` at larger cpc; fixed-xyz DC (coordinates
initialised from real clouds, same matching, loops, optimiser and schedule) at `dc_cpc`; DD3D at the higher
resolution for the cross-resolution claim; DD3D at the paper's iteration count for the first seed (`dd3d_long`).
The network carries the sign flip in the so3_rotator setting only. Each set is stored at the evaluation
resolution (generator: fresh draws; coordinates: resampled), at its last iteration and at its curve's iterations
(column `iteration`; `iterations`: the run's count).
"""

from __future__ import annotations

import time

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_json, write_parquet
from stages.core.seeding import derive_seed
from stages.methods.distillation.distill import Distilled, DistillOptions, distill
from stages.models.workers import map_runs
from stages.papers.dd3d.params import DD3DParams
from stages.papers.dd3d.runs import ROTATOR, Run, planned_runs, setting_arrays


def options_for(run: Run, params: DD3DParams) -> DistillOptions:
    """The distillation options of one run."""
    config, loops = params.grid.distill, params.grid.distill.loops[run.cpc]
    return DistillOptions(
        cpc=run.cpc,
        iterations=run.iterations,
        outer_loop=loops.outer,
        inner_loop=loops.inner,
        batch_real=config.batch_real,
        points=run.distil_points,
        widths=tuple(config.widths),
        flip_w0=config.w0_sign if run.setting == ROTATOR else None,
        lr=config.lr,
        weight_decay=config.weight_decay,
        lr_net=config.lr_net,
        hidden=config.hidden,
        layers=config.layers,
        w0_first=config.w0_first,
        synthesis="generator" if run.generator else "xyz",
    )


def distil_one(
    run: Run, options: DistillOptions, clouds: np.ndarray, labels: np.ndarray, seed: int, eval_points: int
) -> tuple[dict[int, np.ndarray], np.ndarray, list[float], int, float]:
    """Distil one set: its clouds at `eval_points` per evaluated iteration (the curve's and the last), labels,
    losses, saved bytes and wall seconds (snapshot draws included)."""
    snapshots: dict[int, np.ndarray] = {}

    def snapshot(iteration: int, result: Distilled) -> None:
        if iteration + 1 in run.curve:
            snapshots[iteration + 1] = result.clouds(eval_points, seed)

    started = time.perf_counter()
    result = distill(clouds, labels, options, seed, on_iteration=snapshot)
    seconds = time.perf_counter() - started
    snapshots[options.iterations] = result.clouds(eval_points, seed)
    return snapshots, result.labels, result.losses, result.saved_bytes, seconds


def set_rows(base: dict, iteration: int, synthetic: np.ndarray, labels: np.ndarray) -> pl.DataFrame:
    """The distilled table's rows of one set at one iteration."""
    return pl.DataFrame(
        {
            **{key: [value] * len(labels) for key, value in base.items()},
            "iteration": [iteration] * len(labels),
            "cloud": np.arange(len(labels), dtype=np.int64),
            "label": labels.astype(np.int64),
        }
    ).with_columns(
        pl.Series(
            "points", synthetic.reshape(len(labels), -1), dtype=pl.Array(pl.Float32, synthetic.shape[1] * 3)
        )
    )


def run(ctx: StepContext) -> None:
    params: DD3DParams = ctx.params
    table = read_parquet(ctx.input("clouds"))
    jobs, keys = [], []
    for spec in (r for r in planned_runs(params) if r.distilled):
        clouds, labels = setting_arrays(table, spec.setting, "train")
        for seed in params.grid.seeds[:1] if spec.first_seed_only else params.grid.seeds:
            run_seed = derive_seed(ctx.common.seed, "dd3d", "distil", spec.label, seed) % 2**31
            jobs.append(
                (spec, options_for(spec, params), clouds, labels, run_seed, params.grid.evaluation.points)
            )
            keys.append((spec, seed))
    outputs = map_runs(distil_one, jobs, params.grid.design.workers, desc="dd3d distil")
    rows, logs, timings = [], [], {}
    for (spec, seed), (snapshots, labels, losses, saved, seconds) in zip(keys, outputs, strict=True):
        base = {
            "method": spec.method,
            "setting": spec.setting,
            "cpc": spec.cpc,
            "distil_points": spec.distil_points,
            "iterations": spec.iterations,
            "seed": seed,
        }
        rows.extend(set_rows(base, it, synthetic, labels) for it, synthetic in sorted(snapshots.items()))
        logs.append(
            pl.DataFrame(
                {
                    **{key: [value] * len(losses) for key, value in base.items()},
                    "iteration": np.arange(len(losses), dtype=np.int64),
                    "loss": np.asarray(losses, dtype=np.float64),
                    "saved_bytes": [saved] * len(losses),
                }
            )
        )
        timings[f"{spec.label}/seed{seed}"] = round(seconds, 3)
        ctx.log(f"{spec.label} seed {seed}: loss {losses[0]:.3f} → {losses[-1]:.3f}")
    write_parquet(pl.concat(rows), ctx.output("distilled"))
    write_parquet(pl.concat(logs), ctx.output("distil_log"))
    write_json({"seconds_per_run": timings}, ctx.output("timings"))
