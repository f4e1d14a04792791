"""Step `mrmc-trace`: train on the whole pool for R short epochs per seed, logging every sample's loss."""

from __future__ import annotations

import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_json, write_parquet
from stages.core.seeding import derive_seed
from stages.core.validate import ensure_valid
from stages.datasets.classification import to_arrays
from stages.methods.selection.tracing import TRACE_SCHEMA, compute_trace, trace_to_table


def run(ctx: StepContext) -> None:
    """One trace per seed → `trace.parquet` (+ wall-clock seconds per seed)."""
    params = ctx.params
    pool = to_arrays(read_parquet(ctx.input("pool")))
    n_classes = int(pool.labels.max()) + 1
    tables, seconds = [], {}
    for seed in params.seeds:
        result = compute_trace(
            pool.features,
            pool.labels,
            n_classes,
            params.trace,
            derive_seed(ctx.common.seed, "mrmc", "trace", seed),
            desc=f"trace seed {seed}",
        )
        ctx.log(f"seed {seed}: {params.trace.epochs} epochs in {result.seconds:.1f}s")
        tables.append(trace_to_table(seed, pool.sample_ids, result))
        seconds[str(seed)] = round(result.seconds, 4)
    trace = pl.concat(tables)
    ensure_valid(trace, TRACE_SCHEMA, "mrmc trace")
    write_parquet(trace, ctx.output("trace"))
    write_json({"trace_seconds": seconds, "epochs": params.trace.epochs}, ctx.output("timings"))
