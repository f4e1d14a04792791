"""`table`: a user's Parquet table (`common.datasets.table.path`), a DVC dep of its stage.

Wide (numeric feature columns + a label) or already a classification table; the label is what the papers'
oracles and evaluations read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
from pydantic import Field

from stages.core.errors import DataValidationError, MissingSourceError
from stages.core.inputs import parquet_problems
from stages.datasets.classification import classification_schema, from_wide_table
from stages.datasets.source import CLASSIFICATION, Source
from stages.datasets.split_params import SplitSourceParams
from stages.datasets.splits import stratified_split
from stages.datasets.user_table import describe_classification_table, read_wide_table


class TableSourceParams(SplitSourceParams):
    """A user's Parquet table: a classification table, or a wide table of numeric features and a label."""

    path: str = "data/raw/digits/table.parquet"
    label_column: str = "label"
    feature_columns: list[str] | None = None
    id_column: str | None = None
    split_column: str | None = Field(
        None, description="column holding 'train'/'test'; None: split stratified by test_fraction"
    )


def read_user_frame(params: TableSourceParams) -> pl.DataFrame:
    """The user's Parquet file as it is (missing, unreadable or empty: an error naming the path)."""
    path = Path(params.path)
    if not path.is_file():
        raise MissingSourceError(f"{path}: table not found (common.datasets.table.path)")
    try:
        frame = pl.read_parquet(path)
    except (pl.exceptions.PolarsError, OSError) as error:
        raise DataValidationError(f"{path}: not a readable Parquet file ({error})") from None
    if frame.is_empty():
        raise DataValidationError(f"{path}: the table has no rows")
    return frame


def describe_user_table(params: TableSourceParams) -> dict[str, Any]:
    """The columns read and the label encoding (raw → internal) of the user's table."""
    frame = read_user_frame(params)
    if "features" in frame.columns and isinstance(frame.schema["features"], pl.Array | pl.List):
        return describe_classification_table(frame, params.label_column, params.path)
    user = read_wide_table(
        frame, params.label_column, params.feature_columns, params.id_column, params.split_column, params.path
    )
    return user.describe()


def load_user_table(params: TableSourceParams) -> pl.DataFrame:
    """A user's Parquet table as a classification table (converted from wide form, split when it has none).

    The rules of `stages.datasets.user_table` apply (finite features, no guessed id-like feature, labels
    encoded to 0..K-1 in sorted order).
    """
    path = Path(params.path)
    frame = read_user_frame(params)
    if "features" in frame.columns and isinstance(frame.schema["features"], pl.Array | pl.List):
        frame = as_named_columns(frame, params, path)
    else:
        frame = from_wide_table(
            frame,
            params.label_column,
            params.feature_columns,
            params.id_column,
            params.split_column,
            str(path),
        )
        if params.split_column is None:
            frame = frame.drop("split")  # from_wide_table marks every row 'train'; split below instead
    if "split" not in frame.columns:
        splits = stratified_split(frame["label"].to_numpy(), params.test_fraction, params.split_seed)
        frame = frame.with_columns(pl.Series("split", splits, dtype=pl.Utf8))
    return frame.select("sample_id", "split", "label", "features")


def as_named_columns(frame: pl.DataFrame, params: TableSourceParams, path: Path) -> pl.DataFrame:
    """A table that already has a `features` array: label/split/id columns renamed to the standard names."""
    renames = {params.label_column: "label", params.split_column: "split", params.id_column: "sample_id"}
    renames = {old: new for old, new in renames.items() if old and old != new}
    missing = [old for old in renames if old not in frame.columns]
    if params.label_column not in frame.columns:
        missing.append(params.label_column)
    if missing:
        raise DataValidationError(f"{path}: column(s) not found: {', '.join(sorted(set(missing)))}")
    frame = frame.rename(renames)
    if "sample_id" not in frame.columns:
        frame = frame.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("sample_id"))
    return frame


def table_problems(params: TableSourceParams) -> list[str]:
    """The table must be a readable Parquet file holding the label and every column the params name."""
    columns = [params.label_column, *(params.feature_columns or []), params.id_column, params.split_column]
    return parquet_problems(params.path, "common.datasets.table.path", columns)


SOURCE = Source(
    "table",
    CLASSIFICATION,
    TableSourceParams,
    load_user_table,
    "a user's Parquet table (common.datasets.table.path): features + integer label",
    files=lambda params: [Path(params.path)],
    deps={"input": "${common.datasets.table.path}"},
    schema=classification_schema(),
    describe=describe_user_table,
    check=table_problems,
)
