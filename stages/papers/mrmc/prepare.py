"""Step `mrmc-prepare`: draw the selection pool from the train split; keep the test split untouched."""

from __future__ import annotations

from stages.core.context import StepContext
from stages.core.io import write_json, write_parquet
from stages.datasets.pool import split_and_validate


def run(ctx: StepContext) -> None:
    """Split the dataset table, validate and write pool and test."""
    pool, test, reports = split_and_validate(ctx, "mrmc")
    write_parquet(pool, ctx.output("pool"))
    write_parquet(test, ctx.output("test"))
    write_json(reports, ctx.output("validation"))
