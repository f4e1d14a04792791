"""Step `info_coevolution-prepare`: the annotation pool (hidden labels = oracle) and the untouched test split."""

from __future__ import annotations

from stages.core.context import StepContext
from stages.core.io import write_json, write_parquet
from stages.datasets.pool import split_and_validate


def run(ctx: StepContext) -> None:
    """Split the dataset table, check the pool can hold the schedule, validate and write pool and test."""
    pool, test, reports = split_and_validate(ctx, "info_coevolution")
    schedule = ctx.params.schedule(pool.height)
    ctx.log(f"seed set {schedule.seed_size}, rounds of {schedule.round_size}, budget {schedule.budget}")
    write_parquet(pool, ctx.output("pool"))
    write_parquet(test, ctx.output("test"))
    write_json(reports, ctx.output("validation"))
