"""A user's table as the synthesizers see it: which columns are numeric, which categorical, checked once.

Numeric: integer and float columns (integers come back rounded to their dtype). Categorical: strings,
booleans, Polars categoricals/enums, and any column the caller names as categorical. Anything else (dates,
lists, structs, binary, ...) is refused, naming the column, as are empty tables, a single row, nulls and
column names that clash once case and surrounding spaces are ignored (one-hot names and reports would merge
them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from stages.core.errors import DataValidationError
from stages.datasets.user_table import check_finite, looks_like_id

CATEGORICAL_DTYPES = (pl.String, pl.Boolean, pl.Categorical, pl.Enum)


@dataclass(frozen=True)
class TableSpec:
    """Column order, the numeric and categorical columns, and each column's dtype."""

    columns: tuple[str, ...]
    numeric: tuple[str, ...]
    categorical: tuple[str, ...]
    dtypes: dict[str, pl.DataType]

    def is_integer(self, column: str) -> bool:
        return self.dtypes[column].is_integer()


def _check_names(columns: Sequence[str], where: str) -> None:
    seen: dict[str, str] = {}
    for column in columns:
        key = column.strip().casefold()
        if not key:
            raise DataValidationError(f"{where}: column {column!r} has an empty name")
        if key in seen:
            raise DataValidationError(
                f"{where}: column names {seen[key]!r} and {column!r} clash (equal ignoring case and spaces)"
            )
        seen[key] = column


def infer_spec(
    table: pl.DataFrame, categorical: Sequence[str] = (), where: str = "table", min_rows: int = 2
) -> TableSpec:
    """Check `table` and split its columns into numeric and categorical.

    `categorical` forces numeric columns to be treated as categories (e.g. integer codes). Raises
    `DataValidationError` naming `where` and the offending column.
    """
    if table.width == 0 or table.height == 0:
        raise DataValidationError(f"{where}: the table is empty ({table.height} rows, {table.width} columns)")
    if table.height < min_rows:
        raise DataValidationError(f"{where}: {table.height} row(s); a synthesizer needs at least {min_rows}")
    _check_names(table.columns, where)
    unknown = [column for column in categorical if column not in table.columns]
    if unknown:
        raise DataValidationError(f"{where}: categorical column(s) not in the table: {', '.join(unknown)}")
    numeric, categories = [], []
    for column, dtype in table.schema.items():
        nulls = table[column].null_count()
        if nulls == table.height:
            raise DataValidationError(f"{where}: column {column!r} is entirely null")
        if nulls:
            raise DataValidationError(
                f"{where}: column {column!r} has {nulls} null(s); impute or drop them first"
            )
        if column in categorical or isinstance(dtype, CATEGORICAL_DTYPES):
            categories.append(column)
        elif dtype.is_numeric():
            check_finite(table, [column], where)  # NaN / ±inf named with count and first row
            numeric.append(column)
        else:
            raise DataValidationError(
                f"{where}: column {column!r} has unsupported dtype {dtype} (numeric, string, boolean or "
                "categorical columns only)"
            )
    return TableSpec(tuple(table.columns), tuple(numeric), tuple(categories), dict(table.schema))


def leave_out_ids(
    table: pl.DataFrame, id_columns: Sequence[str], categorical: Sequence[str], where: str
) -> pl.DataFrame:
    """The project's user-table rule for synthesis: the declared id columns are left out (never synthesized,
    not in the output); a numeric column that looks like a row id (a name like `id`, `rid`, `index`, `*_id`,
    or distinct integers) and is neither declared an id nor a category is an error saying how to resolve it."""
    unknown = [column for column in id_columns if column not in table.columns]
    if unknown:
        raise DataValidationError(f"{where}: id column(s) not in the table: {', '.join(unknown)}")
    kept = table.drop(list(id_columns))
    for column, dtype in kept.schema.items():
        if column in categorical or not dtype.is_numeric():
            continue
        reason = looks_like_id(column, kept[column])
        if reason:
            raise DataValidationError(
                f"{where}: column {column!r} looks like a row id ({reason}), so it is not synthesized without "
                f"being asked: pass --id-column {column} (id_columns) to leave it out, or --categorical "
                f"{column} to synthesize it as a category"
            )
    return kept


def check_matches(table: pl.DataFrame, spec: TableSpec, where: str) -> None:
    """Raise unless `table` has exactly the columns and dtypes of `spec` (e.g. a test split vs training)."""
    if tuple(table.columns) != spec.columns:
        raise DataValidationError(
            f"{where}: columns {table.columns} differ from the training table's {spec.columns}"
        )
    for column in spec.columns:
        if table.schema[column] != spec.dtypes[column]:
            raise DataValidationError(
                f"{where}: column {column!r} is {table.schema[column]}, the training table's is {spec.dtypes[column]}"
            )


def category_codes(series: pl.Series) -> tuple[np.ndarray, list]:
    """Integer codes of a categorical column and its levels (sorted, so the codes are order-free)."""
    values = series.cast(pl.String) if isinstance(series.dtype, pl.Categorical | pl.Enum) else series
    levels = values.unique().sort().to_list()
    lookup = {level: code for code, level in enumerate(levels)}
    return np.array([lookup[value] for value in values.to_list()], dtype=np.int64), levels


def numeric_column(values: np.ndarray, column: str, spec: TableSpec) -> pl.Series:
    """A synthesized numeric column in its training dtype (integers rounded)."""
    dtype = spec.dtypes[column]
    if dtype.is_integer():
        values = np.rint(values)
    return pl.Series(column, values).cast(dtype)


def categorical_column(levels: list, codes: np.ndarray, column: str, spec: TableSpec) -> pl.Series:
    """A synthesized categorical column (codes → levels) in its training dtype."""
    dtype = spec.dtypes[column]
    series = pl.Series(column, [levels[code] for code in codes])
    return series.cast(dtype)
