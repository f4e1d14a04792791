"""Step `info_coevolution-prepare`: the labelled calibration split, the annotation pool (hidden labels = oracle)
and the untouched test split.

`calibration.parquet` is `calibration_size` labelled train rows drawn (stratified) first; the pool is drawn from
the remaining train rows, so the two are disjoint. Each round's temperature is fitted on it, never on the test
split; no strategy trains on it.
"""

from __future__ import annotations

import polars as pl

from stages.core.context import StepContext
from stages.core.errors import PipelineError
from stages.core.io import read_parquet, write_json, write_parquet
from stages.core.seeding import derive_seed
from stages.core.validate import ensure_valid
from stages.datasets.registry import get_source
from stages.datasets.splits import split_pool_and_test, stratified_subsample


def carve_calibration(table: pl.DataFrame, size: int, seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """`size` train rows (stratified) for calibration, and the table without them."""
    train = table.filter(pl.col("split") == "train")
    if train.is_empty():
        raise PipelineError("the pool is empty: the dataset has no 'train' rows")
    if size > train.height // 2:
        raise PipelineError(
            f"info_coevolution.calibration_size {size}: at most half of the {train.height} train rows, so the "
            "pool keeps the rest"
        )
    calibration = stratified_subsample(train, size, derive_seed(seed, "info_coevolution", "calibration"))
    rest = table.filter(~pl.col("sample_id").is_in(calibration["sample_id"].implode()))
    return calibration, rest


def run(ctx: StepContext) -> None:
    """Split the dataset table, check the pool can hold the schedule, validate and write the three parts."""
    params = ctx.params
    table = read_parquet(ctx.input("table"))
    if table.is_empty():
        raise PipelineError(f"{ctx.input('table')}: the dataset table is empty; nothing to draw a pool from")
    calibration, rest = carve_calibration(table, params.calibration_size, ctx.common.seed)
    pool, test = split_pool_and_test(
        rest, params.pool_size, params.test_size, ctx.common.seed, "info_coevolution"
    )
    schema = get_source(params.dataset).schema
    frames = {"calibration": calibration, "pool": pool, "test": test}
    reports = {
        name: ensure_valid(frame, schema, f"info_coevolution {name} ({params.dataset})").to_dict()
        for name, frame in frames.items()
    }
    schedule = params.schedule(pool.height)
    ctx.log(f"calibration {calibration.height}, pool {pool.height}, test {test.height} rows")
    ctx.log(f"seed set {schedule.seed_size}, rounds of {schedule.round_size}, budget {schedule.budget}")
    for name, frame in frames.items():
        write_parquet(frame, ctx.output(name))
    write_json(reports, ctx.output("validation"))
