"""The rules every stage applies to a user's own table, written once.

`icml25 select`/`validate`, the `table` source every paper's `dataset: table` reads, and `icml25 bandit`'s arm
matrix all read a stranger's Parquet file. The same rules hold for each:

- **Non-finite values** (null, NaN, +inf, -inf) in a feature column are an error naming the column as the user
  named it, with the count and the first bad row.
- **Feature columns** default to every numeric column except the label, id and split columns; a guessed
  feature column that looks like a row id is an error asking for ``--id-column`` or ``--feature-columns``.
  A column looks like an id when its name is one of :data:`ID_NAMES` (case-insensitive) or ends in ``_id``,
  or when it holds integers that are all distinct on a table of at least :data:`ID_MIN_ROWS` rows. Columns the
  user lists explicitly are never second-guessed.
- **Labels** are encoded to 0..K-1 in sorted order of the raw values (integers, strings or booleans); the raw →
  internal mapping is recorded, with a note when it is not the identity (labels {1, 2} become {0, 1}).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from stages.core.errors import DataValidationError

ID_NAMES = frozenset({"id", "rid", "idx", "index", "row", "row_id", "rowid", "key", "uuid", "unnamed: 0"})
ID_MIN_ROWS = 10


@dataclass(frozen=True)
class ColumnChoice:
    """The columns a user table was read with, and whether the features were guessed."""

    label: str
    features: tuple[str, ...]
    id: str | None = None
    split: str | None = None
    guessed_features: bool = False

    def describe(self) -> dict[str, Any]:
        """JSON-ready record of the columns used (for reports and stdout)."""
        return {
            "label_column": self.label,
            "id_column": self.id,
            "split_column": self.split,
            "feature_columns": list(self.features),
            "n_features": len(self.features),
            "feature_columns_guessed": self.guessed_features,
        }


@dataclass(frozen=True)
class LabelEncoding:
    """Raw label values in internal order: internal label i is `raw[i]`."""

    column: str
    raw: tuple[Any, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def is_identity(self) -> bool:
        """True when the raw labels already are 0..K-1."""
        return list(self.raw) == list(range(len(self.raw)))

    def decode(self, internal: np.ndarray) -> list[Any]:
        """Raw values of internal labels."""
        return [self.raw[int(label)] for label in internal]

    def describe(self) -> dict[str, Any]:
        """JSON-ready raw → internal mapping (raw values as strings, JSON keys) and notes."""
        return {
            "label_column": self.column,
            "raw_to_internal": {str(value): index for index, value in enumerate(self.raw)},
            "identity": self.is_identity,
            "notes": list(self.notes),
        }


def looks_like_id(name: str, column: pl.Series) -> str | None:
    """Why `column` looks like a row id (None when it does not)."""
    lowered = name.strip().lower()
    if lowered in ID_NAMES or lowered.endswith("_id"):
        return f"its name '{name}' is an id name"
    if column.dtype.is_integer() and len(column) >= ID_MIN_ROWS and column.n_unique() == len(column):
        return f"its {len(column)} integer values are all distinct"
    return None


def guess_feature_columns(
    frame: pl.DataFrame,
    reserved: Sequence[str | None],
    source: str,
    what: str = "feature",
    id_flag: bool = True,
) -> list[str]:
    """Every numeric column not in `reserved`; an id-like one is an error saying how to resolve it.

    `id_flag`: whether the caller takes an id column (the error then suggests it).
    """
    reserved_set = {name for name in reserved if name}
    guessed = [
        name for name, dtype in frame.schema.items() if name not in reserved_set and dtype.is_numeric()
    ]
    for name in guessed:
        reason = looks_like_id(name, frame[name])
        if reason:
            as_id = f"pass --id-column {name} (id_column) to use it as the sample id, or " if id_flag else ""
            raise DataValidationError(
                f"{source}: column '{name}' looks like a row id ({reason}), so it is not used as a {what} "
                f"without being asked: {as_id}list the {what} columns with --feature-columns "
                f"(feature_columns) to keep or leave it out"
            )
    return guessed


FLOAT32_MAX = float(np.finfo(np.float32).max)


def check_finite(frame: pl.DataFrame, columns: Sequence[str], source: str) -> None:
    """Raise naming every column of `columns` that holds null, NaN, ±inf or a value beyond float32's range
    (features are stored as float32: 1e300 would become inf under the `features` column instead of the
    user's), with the count and first bad row."""
    problems = []
    for name in _suspect_columns(frame, columns):
        column = frame[name]
        bad = column.is_null()
        if column.dtype.is_float():
            bad = bad | ~column.is_finite().fill_null(False)
        count = int(bad.sum())
        if count:
            first = int(bad.arg_true()[0])
            kinds = _bad_kinds(column, bad)
            problems.append(f"  column '{name}': {count} {kinds} value(s), first at row {first}")
            continue
        huge = column.cast(pl.Float64).abs() > FLOAT32_MAX
        problems.append(
            f"  column '{name}': {int(huge.sum())} value(s) beyond ±{FLOAT32_MAX:.3g} (float32), first at row "
            f"{int(huge.arg_true()[0])}"
        )
    if problems:
        raise DataValidationError(f"{source}: feature values must be finite numbers:\n" + "\n".join(problems))


def _suspect_columns(frame: pl.DataFrame, columns: Sequence[str]) -> list[str]:
    """Columns holding a null, NaN, ±inf or a value beyond float32, found in one pass over the matrix (a loop of
    per-column queries took 43 s at 100,000 columns)."""
    if not columns or frame.is_empty():
        return []
    matrix = frame.select(columns).to_numpy().astype(np.float64, copy=False)  # nulls → NaN
    with np.errstate(invalid="ignore"):
        flagged = ~np.isfinite(matrix).all(axis=0) | (np.abs(matrix) > FLOAT32_MAX).any(axis=0)
    return [columns[index] for index in np.flatnonzero(flagged)]


def _bad_kinds(column: pl.Series, bad: pl.Series) -> str:
    values = column.filter(bad)
    kinds = ["null"] if values.null_count() else []
    if column.dtype.is_float():
        present = values.drop_nulls()
        kinds += [
            kind
            for kind, hit in (("NaN", present.is_nan().any()), ("inf", present.is_infinite().any()))
            if hit
        ]
    return "/".join(kinds)


def encode_labels(column: pl.Series, source: str) -> tuple[pl.Series, LabelEncoding]:
    """Labels as Int64 0..K-1 (sorted raw order) and the encoding; nulls or float labels are errors."""
    name = column.name
    if column.null_count():
        first = int(column.is_null().arg_true()[0])
        raise DataValidationError(
            f"{source}: label column '{name}' has {column.null_count()} null value(s), first at row {first}"
        )
    dtype = column.dtype
    if not (
        dtype.is_integer() or dtype in (pl.Utf8, pl.Boolean, pl.Categorical) or isinstance(dtype, pl.Enum)
    ):
        raise DataValidationError(
            f"{source}: label column '{name}' is {dtype}; labels must be integers, strings or booleans"
        )
    if dtype == pl.Categorical or isinstance(dtype, pl.Enum):
        column = column.cast(pl.Utf8)
    raw = column.unique().sort()
    internal = column.replace_strict(raw, pl.int_range(len(raw), eager=True), return_dtype=pl.Int64)
    values = tuple(value for value in raw.to_list())
    return internal.alias("label"), LabelEncoding(name, values, _label_notes(values))


def _label_notes(raw: tuple[Any, ...]) -> tuple[str, ...]:
    notes = []
    if len(raw) < 2:
        notes.append(f"only one class ({raw[0]!r}): nothing to classify")
    if list(raw) != list(range(len(raw))):
        shown = ", ".join(f"{value!r} → {index}" for index, value in enumerate(raw))
        notes.append(f"labels are not 0..{len(raw) - 1}; encoded in sorted order: {shown}")
    return tuple(notes)


@dataclass(frozen=True)
class UserTable:
    """A wide user table as a classification table, with the columns and label encoding it was read with."""

    frame: pl.DataFrame
    columns: ColumnChoice
    labels: LabelEncoding

    def describe(self) -> dict[str, Any]:
        """Columns and label encoding, JSON-ready."""
        return {"columns": self.columns.describe(), "labels": self.labels.describe()}


def read_wide_table(
    frame: pl.DataFrame,
    label_column: str = "label",
    feature_columns: Sequence[str] | None = None,
    id_column: str | None = None,
    split_column: str | None = None,
    source: str = "table",
) -> UserTable:
    """Apply the rules of this module to a wide table and build the classification table.

    Rows without a split column are all `train` (the selection pool).
    """
    if frame.is_empty():
        raise DataValidationError(f"{source}: the table has no rows")
    named = [(label_column, "label"), (id_column, "id"), (split_column, "split")]
    for name, role in named:
        if name and name not in frame.columns:
            raise DataValidationError(
                f"{source}: {role} column '{name}' not found (columns: {', '.join(frame.columns)})"
            )
    guessed = feature_columns is None
    if guessed:
        feature_columns = guess_feature_columns(frame, [label_column, id_column, split_column], source)
    present = set(frame.columns)
    missing = [name for name in feature_columns if name not in present]
    if missing:
        raise DataValidationError(f"{source}: feature columns not found: {', '.join(missing)}")
    if not feature_columns:
        raise DataValidationError(f"{source}: no numeric feature columns besides '{label_column}'")
    schema = frame.schema  # one lookup: polars rebuilds the schema on each call (quadratic in columns)
    non_numeric = [name for name in feature_columns if not schema[name].is_numeric()]
    if non_numeric:
        raise DataValidationError(f"{source}: feature columns are not numeric: {', '.join(non_numeric)}")
    check_finite(frame, feature_columns, source)
    labels, encoding = encode_labels(frame[label_column], source)
    ids = pl.col(id_column) if id_column else pl.int_range(pl.len(), dtype=pl.Int64)
    split = pl.col(split_column) if split_column else pl.lit("train")
    table = frame.select(
        ids.alias("sample_id"),
        split.alias("split"),
        pl.concat_arr([pl.col(name).cast(pl.Float32) for name in feature_columns]).alias("features"),
    ).insert_column(2, labels)
    choice = ColumnChoice(label_column, tuple(feature_columns), id_column, split_column, guessed)
    return UserTable(table, choice, encoding)


def describe_classification_table(
    frame: pl.DataFrame, label_column: str = "label", source: str = "table"
) -> dict[str, Any]:
    """Columns and (identity) label record of a table already in the classification format."""
    raw = tuple(sorted(int(value) for value in frame[label_column].unique().drop_nulls().to_list()))
    if raw and (raw[0] < 0 or raw[-1] >= max(frame.height, 2)):
        raise DataValidationError(
            f"{source}: column '{label_column}' holds {raw[-1] if raw[-1] >= 0 else raw[0]}; a classification "
            f"table's labels are class ids 0..K-1 (K at most its {frame.height} rows): relabel, or give a wide "
            "table, whose labels are encoded for you"
        )
    width = frame.schema["features"].size if isinstance(frame.schema["features"], pl.Array) else None
    columns = {
        "label_column": label_column,
        "id_column": "sample_id" if "sample_id" in frame.columns else None,
        "split_column": "split" if "split" in frame.columns else None,
        "feature_columns": ["features"],
        "n_features": width,
        "feature_columns_guessed": False,
    }
    notes = []
    if raw != tuple(range(len(raw))):
        notes.append(f"labels {list(raw)} are not 0..K-1: internal class ids are used as given")
    labels = {
        "label_column": label_column,
        "raw_to_internal": {str(value): value for value in raw},
        "identity": True,
        "notes": notes,
    }
    return {"columns": columns, "labels": labels}
