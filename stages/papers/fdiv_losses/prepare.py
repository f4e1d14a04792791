"""Step `fdiv_losses-prepare`: the classification pool (train split) and the untouched test split."""

from __future__ import annotations

from stages.core.context import StepContext
from stages.core.io import write_json, write_parquet
from stages.datasets.pool import split_and_validate


def run(ctx: StepContext) -> None:
    """Split the dataset table, validate and write pool and test."""
    pool, test, reports = split_and_validate(ctx, "fdiv_losses")
    write_parquet(pool, ctx.output("pool"))
    write_parquet(test, ctx.output("test"))
    write_json(reports, ctx.output("validation"))
