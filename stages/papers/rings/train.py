"""Step `rings-train`: GNN and structure-blind baseline per dataset × mode × seed."""

from __future__ import annotations

import time

from stages.core.context import StepContext
from stages.core.io import read_json, write_json, write_parquet
from stages.methods.graphs.audit import split_timings, train_runs


def run(ctx: StepContext) -> None:
    """Train every run and write their test scores."""
    names = list(read_json(ctx.input("summary")))
    datasets = {name: ctx.input("datasets") / name for name in names}
    started = time.perf_counter()
    config = ctx.params.audit
    ctx.log(
        f"{len(names)} datasets × {len(config.modes)} modes × {len(config.seeds)} seeds, {config.workers} workers"
    )
    runs, timings = split_timings(train_runs(datasets, config))
    write_parquet(runs, ctx.output("runs"))
    write_json({"train_seconds": round(time.perf_counter() - started, 2), **timings}, ctx.output("timings"))
