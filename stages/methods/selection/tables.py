"""The selection table: which pool samples each (method, budget, seed) run kept."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.schema import ColumnSpec, TableSchema

SELECTION_SCHEMA = TableSchema(
    name="core-set selection",
    columns=(
        ColumnSpec("method", "str"),
        ColumnSpec("budget", "float", min=0, max=1),
        ColumnSpec("seed", "int", min=0),
        ColumnSpec("sample_id", "int", min=0),
    ),
)


def selection_rows(method: str, budget: float, seed: int, sample_ids: np.ndarray) -> pl.DataFrame:
    """Rows of the selection table for one run."""
    return pl.DataFrame(
        {
            "method": pl.Series([method] * len(sample_ids), dtype=pl.Utf8),
            "budget": np.full(len(sample_ids), budget, dtype=np.float64),
            "seed": np.full(len(sample_ids), seed, dtype=np.int64),
            "sample_id": np.sort(sample_ids).astype(np.int64),
        }
    )
