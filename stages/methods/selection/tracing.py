"""Training traces for score-based selectors, and their Parquet tables.

`compute_trace` trains a fresh model on the pool for a few epochs, logging every sample's loss, correctness
and EL2N norm per epoch, and returns the trained model's embeddings for feature-space selectors.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import polars as pl
import torch

from stages.core.schema import ColumnSpec, TableSchema
from stages.models.training import (
    TrainConfig,
    TrainingTrace,
    build_model,
    embed,
    fit_scaler,
    train_classifier,
)

TRACE_SCHEMA = TableSchema(
    name="training trace",
    columns=(
        ColumnSpec("seed", "int", min=0),
        ColumnSpec("sample_id", "int", min=0),
        ColumnSpec("loss", "array", min=0),
        ColumnSpec("correct", "array", min=0, max=1),
        ColumnSpec("error_norm", "array", min=0, max=2**0.5 + 1e-5),
        ColumnSpec("embedding", "array"),
    ),
)


@dataclass(frozen=True)
class TraceResult:
    """A trace, the trained model's embeddings of the pool and the wall-clock seconds it took."""

    trace: TrainingTrace
    embeddings: np.ndarray
    seconds: float


def compute_trace(
    features: np.ndarray,
    labels: np.ndarray,
    n_classes: int,
    config: TrainConfig,
    seed: int,
    desc: str = "trace",
) -> TraceResult:
    """Train a fresh classifier on the pool for `config.epochs`, logging per-sample statistics."""
    started = time.perf_counter()
    inputs = fit_scaler(features, config)(features)
    model = build_model(inputs.shape[1], n_classes, config, seed)
    trace = train_classifier(
        model, inputs, torch.from_numpy(labels), config, seed, record_trace=True, desc=desc
    )
    embeddings = embed(model, inputs)
    return TraceResult(trace=trace, embeddings=embeddings, seconds=time.perf_counter() - started)


def trace_to_table(seed: int, sample_ids: np.ndarray, result: TraceResult) -> pl.DataFrame:
    """One row per sample: per-epoch arrays of loss, correctness and EL2N, plus the embedding."""
    trace = result.trace
    epochs = trace.epochs
    return pl.DataFrame(
        {"seed": np.full(len(sample_ids), seed, dtype=np.int64), "sample_id": sample_ids.astype(np.int64)}
    ).with_columns(
        pl.Series("loss", trace.loss, dtype=pl.Array(pl.Float32, epochs)),
        pl.Series("correct", trace.correct.astype(np.uint8), dtype=pl.Array(pl.UInt8, epochs)),
        pl.Series("error_norm", trace.error_norm, dtype=pl.Array(pl.Float32, epochs)),
        pl.Series(
            "embedding",
            result.embeddings.astype(np.float32),
            dtype=pl.Array(pl.Float32, result.embeddings.shape[1]),
        ),
    )


def trace_from_table(
    frame: pl.DataFrame, seed: int, sample_ids: np.ndarray
) -> tuple[TrainingTrace, np.ndarray]:
    """The trace and embeddings of one seed, rows aligned to `sample_ids`."""
    rows = frame.filter(pl.col("seed") == seed)
    order = pl.DataFrame({"sample_id": sample_ids.astype(np.int64)}).with_row_index("position")
    rows = order.join(rows, on="sample_id", how="left").sort("position")
    if rows["loss"].null_count():
        raise ValueError(f"trace for seed {seed} does not cover every pool sample")
    trace = TrainingTrace(
        loss=rows["loss"].to_numpy(),
        correct=rows["correct"].to_numpy().astype(bool),
        error_norm=rows["error_norm"].to_numpy(),
    )
    return trace, rows["embedding"].to_numpy()
