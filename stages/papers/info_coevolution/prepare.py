"""Step `info_coevolution-prepare`: the annotation pool (hidden labels = oracle) and the untouched test split."""

from __future__ import annotations

from stages.core.errors import PipelineError
from stages.core.io import read_parquet, write_json, write_parquet
from stages.core.steps import StepContext
from stages.core.validate import ensure_valid
from stages.datasets.sources import SOURCES
from stages.datasets.splits import split_pool_and_test


def run(ctx: StepContext) -> None:
    """Split the dataset table, check the pool can hold the schedule, validate and write pool and test."""
    params = ctx.params
    table = read_parquet(ctx.input("table"))
    if table.is_empty():
        raise PipelineError(f"{ctx.input('table')}: the dataset table is empty; nothing to annotate")
    pool, test = split_pool_and_test(
        table, params.pool_size, params.test_size, ctx.common.seed, "info_coevolution"
    )
    schedule = params.schedule(pool.height)
    schema = SOURCES.get(params.dataset).schema
    reports = {
        name: ensure_valid(frame, schema, f"info_coevolution {name} ({params.dataset})").to_dict()
        for name, frame in (("pool", pool), ("test", test))
    }
    ctx.log(
        f"pool {pool.height} rows, test {test.height} rows; seed set {schedule.seed_size}, "
        f"rounds of {schedule.round_size}, budget {schedule.budget}"
    )
    write_parquet(pool, ctx.output("pool"))
    write_parquet(test, ctx.output("test"))
    write_json(reports, ctx.output("validation"))
