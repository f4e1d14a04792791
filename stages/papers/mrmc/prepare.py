"""Step `mrmc-prepare`: draw the selection pool from the train split; keep the test split untouched."""

from __future__ import annotations

from stages.core.io import read_parquet, write_json, write_parquet
from stages.core.steps import StepContext
from stages.core.validate import ensure_valid
from stages.datasets.sources import SOURCES
from stages.datasets.splits import split_pool_and_test


def run(ctx: StepContext) -> None:
    """Read the dataset table, split it, validate and write pool and test."""
    params = ctx.params
    source = SOURCES.get(params.dataset)
    table = read_parquet(ctx.input("table"))  # validated by its data-<name> stage; pool and test are below
    pool, test = split_pool_and_test(table, params.pool_size, params.test_size, ctx.common.seed, "mrmc")
    reports = {
        name: ensure_valid(frame, source.schema, f"mrmc {name} ({params.dataset})").to_dict()
        for name, frame in (("pool", pool), ("test", test))
    }
    ctx.log(f"pool {pool.height} rows, test {test.height} rows, {pool['label'].n_unique()} classes")
    write_parquet(pool, ctx.output("pool"))
    write_parquet(test, ctx.output("test"))
    write_json(reports, ctx.output("validation"))
