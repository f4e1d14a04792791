"""Step `dd3d-evaluate`: a fresh PointNet trained on every set of the design and tested on real clouds.

Paired over seeds: within a seed every set's network starts from the same initialisation and sees the same
augmentation draws. Distilled and random sets train `evaluation.epochs` (one batch per epoch at these sizes);
full data trains `full_epochs` in batches of `full_batch`. The sign flip is in the network in so3_rotator.
A distilled run is evaluated at every stored iteration (its curve and its last: `final` marks the last).
"""

from __future__ import annotations

import time

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_json, write_parquet
from stages.core.seeding import derive_seed
from stages.methods.distillation.distill import random_subset
from stages.methods.distillation.evaluate import EvalOptions, train_and_test
from stages.models.workers import map_runs
from stages.papers.dd3d.params import DD3DParams
from stages.papers.dd3d.runs import ROTATOR, Run, planned_runs, setting_arrays, subsample


def eval_options(run: Run, params: DD3DParams) -> EvalOptions:
    """The evaluation options of one run."""
    config = params.grid.evaluation
    full = run.method == "full"
    return EvalOptions(
        epochs=config.full_epochs if full else config.epochs,
        lr=config.lr,
        weight_decay=config.weight_decay,
        lr_min=config.lr_min,
        batch=config.full_batch if full else config.batch,
        widths=tuple(params.grid.distill.widths),
        flip_w0=params.grid.distill.w0_sign if run.setting == ROTATOR else None,
        check_every=config.check_every,
    )


def evaluate_one(
    train: np.ndarray,
    labels: np.ndarray,
    test: np.ndarray,
    test_labels: np.ndarray,
    options: EvalOptions,
    seed: int,
) -> tuple[float, float, list[float], float]:
    """Final and max OA, per-class final accuracy and wall seconds of one trained network."""
    started = time.perf_counter()
    result = train_and_test(train, labels, test, test_labels, int(test_labels.max()) + 1, options, seed)
    return result.final_accuracy, result.max_accuracy, result.per_class_final, time.perf_counter() - started


def stored(run: Run, seed: int, distilled: pl.DataFrame) -> pl.DataFrame:
    """The distilled table's rows of one run and seed (every stored iteration)."""
    return distilled.filter(
        (pl.col("method") == run.method)
        & (pl.col("setting") == run.setting)
        & (pl.col("cpc") == run.cpc)
        & (pl.col("distil_points") == run.distil_points)
        & (pl.col("seed") == seed)
    )


def training_set(
    run: Run,
    seed: int,
    table: pl.DataFrame,
    distilled: pl.DataFrame,
    points: int,
    base: int,
    iteration: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """The clouds and labels a run trains on, at `points` points (a distilled run: at `iteration`)."""
    if run.distilled:
        rows = stored(run, seed, distilled).filter(pl.col("iteration") == iteration).sort("cloud")
        flat = np.asarray(rows["points"].to_numpy(), dtype=np.float32)
        return flat.reshape(len(rows), -1, 3), rows["label"].to_numpy().astype(np.int64)
    clouds, labels = setting_arrays(table, run.setting, "train")
    clouds = subsample(clouds, points, derive_seed(base, "dd3d", "points", "train"))
    if run.method == "full":
        return clouds, labels
    rows = random_subset(
        labels, run.cpc, derive_seed(base, "dd3d", "random", run.setting, run.cpc, seed) % 2**31
    )
    return clouds[rows], labels[rows]


def run(ctx: StepContext) -> None:
    params: DD3DParams = ctx.params
    table, distilled = read_parquet(ctx.input("clouds")), read_parquet(ctx.input("distilled"))
    points, base = params.grid.evaluation.points, ctx.common.seed
    jobs, keys = [], []
    for spec in planned_runs(params):
        test, test_labels = setting_arrays(table, spec.setting, "test")
        test = subsample(test, points, derive_seed(base, "dd3d", "points", "test"))
        for seed in params.grid.seeds[:1] if spec.first_seed_only else params.grid.seeds:
            its = stored(spec, seed, distilled)["iteration"].unique().sort() if spec.distilled else [0]
            for it in its:
                train, labels = training_set(spec, seed, table, distilled, points, base, it)
                eval_seed = derive_seed(base, "dd3d", "evaluate", seed) % 2**31
                jobs.append((train, labels, test, test_labels, eval_options(spec, params), eval_seed))
                keys.append((spec, seed, it))
    outputs = map_runs(evaluate_one, jobs, params.grid.design.workers, desc="dd3d evaluate")
    rows, timings = [], {}
    for (spec, seed, it), (final, best, per_class, seconds) in zip(keys, outputs, strict=True):
        rows.append(
            {
                "run": spec.label,
                "method": spec.method,
                "setting": spec.setting,
                "cpc": spec.cpc,
                "distil_points": spec.distil_points,
                "seed": seed,
                "iteration": it,
                "iterations": spec.iterations,
                "final": it == spec.iterations,
                "final_oa": 100 * final,
                "max_oa": 100 * best,
                "per_class_final": [100 * value for value in per_class],
            }
        )
        timings[f"{spec.label}/seed{seed}/it{it}"] = round(seconds, 3)
    results = pl.DataFrame(rows)
    for row in (
        results.filter("final")
        .group_by("run", maintain_order=True)
        .agg(pl.col("final_oa").mean())
        .iter_rows()
    ):
        ctx.log(f"{row[0]}: mean final OA {row[1]:.1f}")
    write_parquet(results, ctx.output("results"))
    write_json({"seconds_per_run": timings}, ctx.output("timings"))
