"""Core-set selection on any classification table: the reusable stage behind `coreset-select` and
`icml25 select`.

The input is either a classification table (`sample_id`, `split`, `label`, array column `features`) or a
user's wide table (numeric feature columns + an integer label). It is validated, the `train` rows form the
pool, a trace is trained when the selector needs one (or for embeddings), and the chosen rows come back.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import polars as pl
from pydantic import Field

from stages.core.params import StrictModel
from stages.core.validate import ValidationReport, ensure_valid
from stages.datasets.classification import classification_schema, from_wide_table, to_arrays
from stages.methods.selection.coreset import SelectionPool, budget_count
from stages.methods.selection.registry import SELECTORS, make_selector
from stages.methods.selection.tracing import compute_trace
from stages.models.training import Standardizer, TrainConfig


class TableSelectionParams(StrictModel):
    """What `coreset-select` reads: the table, how to read it, and the selector."""

    input: str = "data/raw/digits/table.parquet"
    label_column: str = "label"
    feature_columns: list[str] | None = None
    id_column: str | None = None
    method: str = "mrmc"
    options: dict[str, Any] = Field(default_factory=dict)
    budget: float = Field(0.3, gt=0, le=1)
    seed: int = Field(0, ge=0)
    feature_space: Literal["embedding", "raw"] = "embedding"
    trace: TrainConfig = TrainConfig(epochs=10)


@dataclass(frozen=True)
class TableSelection:
    """The chosen pool rows, the validation report of the input and timings."""

    chosen: pl.DataFrame
    report: ValidationReport
    summary: dict[str, Any]


def as_classification_table(frame: pl.DataFrame, params: TableSelectionParams, source: str) -> pl.DataFrame:
    """The input as a classification table (converted from a wide table when it has no `features` array)."""
    if "features" in frame.columns and isinstance(frame.schema["features"], pl.Array | pl.List):
        return frame
    return from_wide_table(
        frame, params.label_column, params.feature_columns, params.id_column, source=source
    )


def select_from_table(frame: pl.DataFrame, params: TableSelectionParams, source: str) -> TableSelection:
    """Validate `frame`, select a core-set of its train rows, and return them with a summary."""
    selector = make_selector(params.method, params.options, key="coreset.options")
    table = as_classification_table(frame, params, source)
    report = ensure_valid(table, classification_schema(), source)
    pool_frame = table.filter(pl.col("split") == "train")
    pool = to_arrays(pool_frame)
    started = time.perf_counter()
    trace, features = None, Standardizer.fit(pool.features)(pool.features).numpy()
    if SELECTORS.get(params.method).needs_trace or params.feature_space == "embedding":
        result = compute_trace(
            pool.features, pool.labels, int(pool.labels.max()) + 1, params.trace, params.seed
        )
        trace = result.trace
        features = result.embeddings if params.feature_space == "embedding" else features
    budget = budget_count(params.budget, len(pool))
    chosen = selector(SelectionPool(features, pool.labels, trace), budget, np.random.default_rng(params.seed))
    seconds = time.perf_counter() - started
    chosen_frame = pool_frame[chosen].select("sample_id", "label")
    summary = {
        "method": params.method,
        "budget_fraction": params.budget,
        "pool_size": len(pool),
        "selected": int(budget),
        "class_counts": {
            str(k): int(v) for k, v in chosen_frame["label"].value_counts().sort("label").iter_rows()
        },
        "seconds": round(seconds, 4),
    }
    return TableSelection(chosen=chosen_frame, report=report, summary=summary)
