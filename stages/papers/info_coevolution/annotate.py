"""Step `info_coevolution-annotate`: every strategy × seed annotates the pool online, round by round.

Writes the learning curves (annotations, pseudo-labels, test accuracy, remaining gain, stop flag per round),
the annotated sample ids with their round, and the wall-clock timings (kept apart so the data outputs are
byte-identical across reruns).
"""

from __future__ import annotations

import polars as pl

from stages.core.context import StepContext
from stages.core.io import write_json, write_parquet
from stages.core.schema import ColumnSpec, TableSchema
from stages.core.validate import ensure_valid
from stages.methods.selection.online.loop import AnnotationRun, run_online_annotation
from stages.methods.selection.online.registry import make_strategy
from stages.papers.info_coevolution.data import load_pool_and_test
from stages.papers.info_coevolution.reference import run_seed_value

CURVES_SCHEMA = TableSchema(
    name="info_coevolution curves",
    columns=(
        ColumnSpec("strategy", "str"),
        ColumnSpec("seed", "int", min=0),
        ColumnSpec("round", "int", min=0),
        ColumnSpec("n_annotated", "int", min=1),
        ColumnSpec("n_pseudo", "int", min=0),
        ColumnSpec("accuracy", "float", min=0, max=1),
        ColumnSpec("remaining_gain", "float", nullable=True),
        ColumnSpec("stopped", "bool"),
    ),
)


def curve_frame(strategy: str, seed: int, run: AnnotationRun) -> pl.DataFrame:
    """One run's rounds as rows (NaN remaining gain → null for strategies without a gain)."""
    return pl.DataFrame(
        {
            "strategy": strategy,
            "seed": seed,
            "round": [record.round for record in run.records],
            "n_annotated": [record.n_annotated for record in run.records],
            "n_pseudo": [record.n_pseudo for record in run.records],
            "accuracy": [record.accuracy for record in run.records],
            "remaining_gain": [record.remaining_gain for record in run.records],
            "stopped": [record.stopped for record in run.records],
        },
        schema_overrides={"seed": pl.Int64, "round": pl.Int64, "n_annotated": pl.Int64, "n_pseudo": pl.Int64},
    ).with_columns(pl.col("remaining_gain").fill_nan(None))


def run(ctx: StepContext) -> None:
    """Run every (strategy, seed) and write curves, annotations and timings."""
    params = ctx.params
    data = load_pool_and_test(ctx.input("pool"), ctx.input("test"))
    schedule = params.schedule(len(data.pool))
    curves, annotations, timings = [], [], []
    for seed in params.seeds:
        for label, entry in params.strategies.items():
            strategy = make_strategy(entry.strategy, entry.options)
            result = run_online_annotation(
                data.pool.features, data.pool.labels, strategy, schedule, params.train,
                run_seed_value(ctx.common.seed, seed), data.test_accuracy(), desc=f"{label} seed {seed}",
            )  # fmt: skip
            curves.append(curve_frame(label, seed, result))
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
                f"{label:>22} seed {seed}: {last.n_annotated} annotations, accuracy {last.accuracy:.4f}"
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
