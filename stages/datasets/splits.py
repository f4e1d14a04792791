"""Pool and evaluation splits of a classification table, drawn stratified and reproducibly."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.errors import PipelineError
from stages.core.seeding import derive_seed


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
    table: pl.DataFrame, pool_size: int | None, test_size: int | None, seed: int, namespace: str
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The pool (from `train` rows) and the evaluation set (from `test` rows); `namespace` keys the seeds."""
    train = table.filter(pl.col("split") == "train")
    test = table.filter(pl.col("split") == "test")
    if train.is_empty():
        raise PipelineError("the pool is empty: the dataset has no 'train' rows")
    if test.is_empty():
        raise PipelineError("the dataset has no 'test' rows to evaluate on")
    pool = stratified_subsample(train, pool_size, derive_seed(seed, namespace, "pool"))
    test = stratified_subsample(test, test_size, derive_seed(seed, namespace, "test"))
    return pool, test


def stratified_split(labels: np.ndarray, test_fraction: float, seed: int) -> np.ndarray:
    """Split names ("train"/"test") with `test_fraction` of each class in test, reproducibly."""
    rng = np.random.default_rng(seed)
    splits = np.full(len(labels), "train", dtype=object)
    for label in np.unique(labels):
        members = np.flatnonzero(labels == label)
        n_test = round(test_fraction * len(members))
        splits[rng.permutation(members)[:n_test]] = "test"
    return splits
