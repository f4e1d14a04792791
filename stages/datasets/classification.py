"""The classification table: the shape every selector and classifier stage reads.

Columns: `sample_id` (unique int), `split` ("train" | "test"), `label` (int ≥ 0) and `features`, a
fixed-size numeric array column (images are flattened). A user's wide Parquet table (one numeric column per
feature plus a label) converts to it with :func:`from_wide_table`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from stages.core.errors import DataValidationError
from stages.core.schema import ColumnSpec, TableSchema
from stages.datasets.user_table import read_wide_table

SPLITS = ("train", "test")


def classification_schema(
    n_features: int | None = None,
    feature_min: float | None = None,
    feature_max: float | None = None,
    n_classes: int | None = None,
    splits: Sequence[str] = SPLITS,
) -> TableSchema:
    """Schema of a classification table; bounds are checked when given."""
    return TableSchema(
        name="classification",
        columns=(
            ColumnSpec("sample_id", "int", unique=True, min=0),
            ColumnSpec("split", "str", allowed=tuple(splits)),
            ColumnSpec("label", "int", min=0, max=None if n_classes is None else n_classes - 1),
            ColumnSpec("features", "array", min=feature_min, max=feature_max, length=n_features),
        ),
    )


def from_arrays(
    features: np.ndarray, labels: np.ndarray, splits: np.ndarray | Sequence[str], first_id: int = 0
) -> pl.DataFrame:
    """Build a classification table from a 2-D feature matrix, labels and split names."""
    features = np.asarray(features)
    if features.ndim != 2:
        features = features.reshape(len(features), -1)
    n_rows, n_features = features.shape
    inner = pl.UInt8 if features.dtype == np.uint8 else pl.Float32
    if inner == pl.Float32:
        features = features.astype(np.float32, copy=False)
    return pl.DataFrame(
        {
            "sample_id": np.arange(first_id, first_id + n_rows, dtype=np.int64),
            "split": pl.Series(list(splits), dtype=pl.Utf8),
            "label": np.asarray(labels, dtype=np.int64),
        }
    ).with_columns(pl.Series("features", features, dtype=pl.Array(inner, n_features)))


@dataclass(frozen=True)
class ClassificationArrays:
    """NumPy views of a classification table."""

    sample_ids: np.ndarray
    features: np.ndarray
    labels: np.ndarray

    def __len__(self) -> int:
        return len(self.labels)


def to_arrays(frame: pl.DataFrame, dtype: type = np.float32) -> ClassificationArrays:
    """Features as an (n, d) array of `dtype`, labels as int64, ids as int64 (via Arrow, no row loop)."""
    features = frame["features"].to_numpy()
    return ClassificationArrays(
        sample_ids=frame["sample_id"].to_numpy().astype(np.int64, copy=True),
        features=np.array(features, dtype=dtype, order="C", copy=True),
        labels=frame["label"].to_numpy().astype(np.int64, copy=True),
    )


def from_wide_table(
    frame: pl.DataFrame,
    label_column: str = "label",
    feature_columns: Sequence[str] | None = None,
    id_column: str | None = None,
    split_column: str | None = None,
    source: str = "table",
) -> pl.DataFrame:
    """Convert a user's table (numeric feature columns + a label) into a classification table.

    The rules of :mod:`stages.datasets.user_table` apply (finite features, no guessed id-like feature, labels
    encoded to 0..K-1); :func:`~stages.datasets.user_table.read_wide_table` also returns what was used.
    """
    return read_wide_table(frame, label_column, feature_columns, id_column, split_column, source).frame


def check_usable(frame: pl.DataFrame, source: str) -> None:
    """Stop before any training when a classification table has no `train` rows (nothing to select from or
    train on) or labels that are not class indices 0..K-1 (a label of 10⁹ would size arrays by it)."""
    splits = sorted(frame["split"].unique().drop_nulls().to_list()) if "split" in frame.columns else []
    if "split" in frame.columns and "train" not in splits:
        raise DataValidationError(
            f"{source}: no 'train' rows (split values: {', '.join(map(str, splits)) or 'none'}); the pool is "
            "drawn from them"
        )
    if "label" not in frame.columns or not frame.schema["label"].is_integer() or frame.is_empty():
        return  # the schema check names these
    classes, top = frame["label"].n_unique(), frame["label"].max()
    if top is not None and top >= classes:
        raise DataValidationError(
            f"{source}: column 'label': labels must be class indices 0..K-1; the largest is {top} with "
            f"{classes} distinct labels: re-encode them as 0..{classes - 1}"
        )
