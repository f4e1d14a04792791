"""Step `mrmc-prepare`: draw the selection pool from the train split; keep the test split untouched."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.errors import PipelineError
from stages.core.io import read_parquet, write_json, write_parquet
from stages.core.seeding import derive_seed
from stages.core.steps import StepContext
from stages.core.validate import ensure_valid
from stages.datasets.sources import SOURCES


def proportional_counts(labels: np.ndarray, size: int) -> dict[int, int]:
    """Per-class counts summing to `size`, proportional to class frequency (largest remainder)."""
    classes, counts = np.unique(labels, return_counts=True)
    exact = counts * size / counts.sum()
    allotted = np.floor(exact).astype(np.int64)
    leftovers = np.argsort(-(exact - allotted), kind="stable")[: size - allotted.sum()]
    allotted[leftovers] += 1
    return {int(label): int(count) for label, count in zip(classes, allotted, strict=True)}


def stratified_subsample(frame: pl.DataFrame, size: int | None, seed: int) -> pl.DataFrame:
    """`size` rows drawn per class in proportion (all rows when `size` is None), in sample_id order."""
    if size is None or size >= frame.height:
        return frame.sort("sample_id")
    labels = frame["label"].to_numpy()
    rng = np.random.default_rng(seed)
    keep = [
        rng.choice(np.flatnonzero(labels == label), count, replace=False)
        for label, count in proportional_counts(labels, size).items()
    ]
    return frame[np.sort(np.concatenate(keep))].sort("sample_id")


def split_pool_and_test(
    table: pl.DataFrame, pool_size: int | None, test_size: int | None, seed: int
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The pool (from `train` rows) and the evaluation set (from `test` rows)."""
    train = table.filter(pl.col("split") == "train")
    test = table.filter(pl.col("split") == "test")
    if train.is_empty() or test.is_empty():
        raise PipelineError("the dataset needs both 'train' and 'test' rows")
    pool = stratified_subsample(train, pool_size, derive_seed(seed, "mrmc", "pool"))
    test = stratified_subsample(test, test_size, derive_seed(seed, "mrmc", "test"))
    return pool, test


def run(ctx: StepContext) -> None:
    """Read the dataset table, split it, validate and write pool and test."""
    params = ctx.params
    source = SOURCES.get(params.dataset)
    table = read_parquet(ctx.input("table"))  # validated by its data-<name> stage; pool and test are below
    pool, test = split_pool_and_test(table, params.pool_size, params.test_size, ctx.common.seed)
    reports = {
        name: ensure_valid(frame, source.schema, f"mrmc {name} ({params.dataset})").to_dict()
        for name, frame in (("pool", pool), ("test", test))
    }
    ctx.log(f"pool {pool.height} rows, test {test.height} rows, {pool['label'].n_unique()} classes")
    write_parquet(pool, ctx.output("pool"))
    write_parquet(test, ctx.output("test"))
    write_json(reports, ctx.output("validation"))
