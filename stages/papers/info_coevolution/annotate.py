"""Step `info_coevolution-annotate`: every run kind × seed annotates the pool online, round by round.

A run kind is a strategy (what to annotate) with a training mode (supervised, or FixMatch from the round's
supervised teacher). Writes the learning curves (annotations, FixMatch mask rate, test accuracy, remaining
gain, stop flag, and the view's diagnostics: temperature, confident share and precision, radii and the share of
neighbours inside them, per round),
the annotated sample ids with their round, and the wall-clock timings (kept apart so the data outputs are
byte-identical across reruns). The runs go to `workers` one-thread processes (`stages/models/workers.py`);
each run depends only on its own seeds, so the outputs do not depend on the number of workers.
"""

from __future__ import annotations

import polars as pl

from stages.core.context import StepContext
from stages.core.io import write_json, write_parquet
from stages.core.schema import ColumnSpec, TableSchema
from stages.core.validate import ensure_valid
from stages.methods.selection.online.loop import AnnotationRun, run_online_annotation
from stages.methods.selection.online.registry import make_strategy
from stages.models.workers import map_runs
from stages.papers.info_coevolution.data import PoolAndTest, load_pool_and_test
from stages.papers.info_coevolution.params import InfoCoevolutionParams
from stages.papers.info_coevolution.reference import run_seed_value

CURVES_SCHEMA = TableSchema(
    name="info_coevolution curves",
    columns=(
        ColumnSpec("strategy", "str"),
        ColumnSpec("seed", "int", min=0),
        ColumnSpec("round", "int", min=0),
        ColumnSpec("n_annotated", "int", min=1),
        ColumnSpec("training", "str"),
        ColumnSpec("mask_rate", "float", min=0, max=1, nullable=True),
        ColumnSpec("accuracy", "float", min=0, max=1),
        ColumnSpec("remaining_gain", "float", nullable=True),
        ColumnSpec("stopped", "bool"),
    ),
)
DIAGNOSTICS = (
    "temperature",
    "confident_share",
    "confident_precision",
    "vote_radius",
    "vote_inside",
    "rescore_radius",
    "rescore_inside",
)


def curve_frame(strategy: str, training: str, seed: int, run: AnnotationRun) -> pl.DataFrame:
    """One run's rounds as rows (NaN → null: no FixMatch, no gain, or no view after the last round)."""
    records = run.records
    columns = {
        "strategy": strategy,
        "seed": seed,
        "round": [record.round for record in records],
        "n_annotated": [record.n_annotated for record in records],
        "training": training,
        "mask_rate": [record.mask_rate for record in records],
        "accuracy": [record.accuracy for record in records],
        "remaining_gain": [record.remaining_gain for record in records],
        "stopped": [record.stopped for record in records],
    }
    for name in DIAGNOSTICS:
        columns[name] = [float(record.diagnostics.get(name, float("nan"))) for record in records]
    floats = ["mask_rate", "remaining_gain", *DIAGNOSTICS]
    return pl.DataFrame(
        columns,
        schema_overrides={"seed": pl.Int64, "round": pl.Int64, "n_annotated": pl.Int64}
        | dict.fromkeys(floats, pl.Float64),
    ).with_columns(pl.col(floats).fill_nan(None))


def annotation_run(
    data: PoolAndTest, params: InfoCoevolutionParams, base_seed: int, label: str, seed: int
) -> AnnotationRun:
    """One run kind under one seed (picklable: it runs in a worker process)."""
    entry = params.strategies[label]
    return run_online_annotation(
        data.pool.features, data.pool.labels, make_strategy(entry.strategy, entry.options),
        params.schedule(len(data.pool), label), params.train, run_seed_value(base_seed, seed),
        data.test_accuracy(), training=params.training_of(label), calibration=data.calibration_split(),
    )  # fmt: skip


def run(ctx: StepContext) -> None:
    """Run every (strategy, seed) in worker processes and write curves, annotations and timings."""
    params = ctx.params
    data = load_pool_and_test(ctx.input("pool"), ctx.input("test"), ctx.input("calibration"))
    for label in params.strategies:
        params.schedule(len(data.pool), label)  # a cap the pool cannot hold fails before any run
    order = [(label, seed) for seed in params.seeds for label in params.strategies]
    # the FixMatch runs, the longest, start first so the workers finish together
    started = sorted(order, key=lambda task: params.strategies[task[0]].training != "fixmatch")
    tasks = [(data, params, ctx.common.seed, label, seed) for label, seed in started]
    finished = dict(
        zip(started, map_runs(annotation_run, tasks, params.workers, "annotation runs"), strict=True)
    )
    curves, annotations, timings = [], [], []
    for label, seed in order:
        result, entry = finished[label, seed], params.strategies[label]
        curves.append(curve_frame(label, entry.training, seed, result))
        annotations.append(
            pl.DataFrame(
                {
                    "strategy": label,
                    "seed": seed,
                    "round": result.annotated_rounds,
                    "sample_id": data.pool.sample_ids[result.annotated_rows],
                },
                schema_overrides={"seed": pl.Int64, "round": pl.Int64, "sample_id": pl.Int64},
            )
        )
        last = result.records[-1]
        ctx.log(
            f"{label:>26} seed {seed}: {last.n_annotated} annotations, accuracy {last.accuracy:.4f}"
            + (" (stop rule fired)" if last.stopped else "")
        )
        timings += [
            {"strategy": label, "seed": seed, "round": record.round,
             "select_seconds": round(record.select_seconds, 4),
             "train_seconds": round(record.train_seconds, 4)}
            for record in result.records
        ]  # fmt: skip
    curves_frame = pl.concat(curves)
    ensure_valid(curves_frame, CURVES_SCHEMA, "info_coevolution curves")
    write_parquet(curves_frame, ctx.output("curves"))
    write_parquet(pl.concat(annotations), ctx.output("annotations"))
    write_json({"rounds": timings}, ctx.output("timings"))
