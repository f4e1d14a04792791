"""Read and write a KinDEL folder (the real files' layout and columns; see :mod:`.schema`).

`read_folder` checks everything a model relies on before anything is trained, and names what is wrong: a
missing file or column, a negative or infinite count (row and column), a SMILES RDKit cannot parse (row and
column), a split table not row-aligned with the library. As the official KinDEL code reads them
(`kindel/models/compose/dataset.py` fills missing counts with 0; `kindel/utils/data.py` reads a held-out CSV
for its `smiles` and `kd` only), a null or NaN library count is read as 0 and a held-out CSV needs only
`smiles` and `kd` (hash, building blocks, counts and enrichment, when absent, are null). The tables are then
validated with Great Expectations against :data:`.schema.LIBRARY_SCHEMA`, :data:`.schema.SPLIT_SCHEMA` and
:data:`.schema.HELDOUT_SCHEMA`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from stages.core.errors import DataValidationError, MissingSourceError
from stages.core.validate import ensure_valid
from stages.methods.del_screens.fingerprints import parse_smiles
from stages.methods.del_screens.schema import (
    COUNT_COLUMNS,
    ENRICHMENT,
    HELDOUT_KINDS,
    HELDOUT_SCHEMA,
    KD,
    LIBRARY_COLUMNS,
    LIBRARY_SCHEMA,
    SPLIT_COLUMNS,
    SPLIT_KINDS,
    SPLIT_SCHEMA,
    SYNTHONS,
    heldout_path,
    library_path,
    split_path,
)


@dataclass
class Screen:
    """A DEL screen in the KinDEL layout: library, split tables by kind, held-out tables by kind."""

    library: pl.DataFrame
    splits: dict[str, pl.DataFrame]
    heldout: dict[str, pl.DataFrame]


def _require(path: Path) -> Path:
    if not path.is_file():
        raise MissingSourceError(f"{path}: file not found (a KinDEL folder needs it)")
    return path


def _require_columns(frame: pl.DataFrame, columns, where: Path) -> None:
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise DataValidationError(f"{where}: missing column(s) {', '.join(missing)}")


def check_counts(frame: pl.DataFrame, where: str, nullable: bool = False) -> pl.DataFrame:
    """Counts (and enrichment) as Float64; a null (unless allowed), non-finite or negative value is an error
    naming the row and column."""
    for column in (*COUNT_COLUMNS, ENRICHMENT):
        values = frame[column]
        if not (values.dtype.is_numeric() or values.dtype == pl.Null):
            raise DataValidationError(f"{where}: column {column!r} is {values.dtype}, not a number")
        array = values.cast(pl.Float64).to_numpy()
        bad = (~np.isfinite(array) & ~(nullable & np.isnan(array))) | (array < 0)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise DataValidationError(
                f"{where}: row {row}, column {column!r}: {values[row]!r} is not a non-negative count"
                f" ({int(bad.sum())} bad value(s))"
            )
    return frame.with_columns(pl.col(c).cast(pl.Float64) for c in (*COUNT_COLUMNS, ENRICHMENT))


def _missing_counts_as_zero(frame: pl.DataFrame) -> pl.DataFrame:
    """Null and NaN sequencing counts read as 0 (the official code's `fillna(0.0)`); other values untouched."""
    numeric = [c for c in COUNT_COLUMNS if frame.schema[c].is_numeric() or frame.schema[c] == pl.Null]
    return frame.with_columns(pl.col(c).cast(pl.Float64).fill_nan(None).fill_null(0.0) for c in numeric)


def _library(path: Path, max_rows: int | None, seed: int) -> tuple[pl.DataFrame, np.ndarray]:
    frame = pl.read_parquet(path)
    _require_columns(frame, LIBRARY_COLUMNS, path)
    rows = np.arange(frame.height)
    if max_rows is not None and frame.height > max_rows:
        rows = np.sort(np.random.default_rng(seed).choice(frame.height, size=max_rows, replace=False))
    frame = frame[rows].select(LIBRARY_COLUMNS).with_columns(pl.col("molecule_hash").cast(pl.String))
    frame = check_counts(_missing_counts_as_zero(frame), str(path))
    parse_smiles(frame["smiles"].to_list(), str(path), "smiles")
    return frame, rows


def _splits(folder: Path, target: str, rows: np.ndarray, n_library: int) -> dict[str, pl.DataFrame]:
    out = {}
    for kind in SPLIT_KINDS:
        path = _require(folder / split_path(target, kind))
        frame = pl.read_parquet(path)
        _require_columns(frame, SPLIT_COLUMNS, path)
        if frame.height != n_library:
            raise DataValidationError(
                f"{path}: {frame.height} rows, the library has {n_library} (row-aligned)"
            )
        out[kind] = frame[rows].select(pl.col(c).cast(pl.String) for c in SPLIT_COLUMNS)
    return out


def _heldout(path: Path) -> pl.DataFrame:
    frame = pl.read_csv(path, infer_schema_length=None)
    if frame.columns and frame.columns[0] not in (*LIBRARY_COLUMNS, KD):
        frame = frame.drop(frame.columns[0])  # pandas' index column
    _require_columns(frame, ("smiles", KD), path)
    absent = [c for c in LIBRARY_COLUMNS if c not in frame.columns]
    frame = frame.with_columns(
        pl.lit(None, dtype=pl.Float64 if c in (*COUNT_COLUMNS, ENRICHMENT) else pl.String).alias(c)
        for c in absent
    )
    frame = frame.select(*LIBRARY_COLUMNS, KD).with_columns(
        pl.col("molecule_hash").cast(pl.String), *(pl.col(c).cast(pl.String) for c in SYNTHONS)
    )
    frame = check_counts(frame, str(path), nullable=True)
    kd = frame[KD].cast(pl.Float64, strict=False)
    bad = kd.is_null() | ~(kd > 0).fill_null(False)
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataValidationError(
            f"{path}: row {row}, column {KD!r}: {frame[KD][row]!r} is not a positive Kd"
        )
    parse_smiles(frame["smiles"].to_list(), str(path), "smiles")
    return frame.with_columns(kd)


def read_folder(
    folder: str | Path, target: str, max_rows: int | None = None, seed: int = 0, check: bool = True
) -> tuple[Screen, dict]:
    """A KinDEL folder's tables for `target` (at most `max_rows` library rows, drawn with `seed`), checked and
    validated; returns the screen and the GX validation reports (none when `check` is off: a folder this
    project wrote and validated)."""
    folder = Path(folder)
    library_file = _require(folder / library_path(target))
    table, rows = _library(library_file, max_rows, seed)
    n_library = pl.scan_parquet(library_file).select(pl.len()).collect().item()
    screen = Screen(
        library=table,
        splits=_splits(folder, target, rows, n_library),
        heldout={kind: _heldout(_require(folder / heldout_path(target, kind))) for kind in HELDOUT_KINDS},
    )
    return screen, validate(screen, target) if check else {}


def validate(screen: Screen, target: str) -> dict:
    """Great Expectations reports of every table (raises DataValidationError naming the table on failure)."""
    reports = {"library": ensure_valid(screen.library, LIBRARY_SCHEMA, library_path(target)).to_dict()}
    for kind, frame in screen.splits.items():
        reports[f"splits_{kind}"] = ensure_valid(frame, SPLIT_SCHEMA, split_path(target, kind)).to_dict()
    for kind, frame in screen.heldout.items():
        reports[f"heldout_{kind}"] = ensure_valid(frame, HELDOUT_SCHEMA, heldout_path(target, kind)).to_dict()
    return reports


def write_folder(screen: Screen, folder: str | Path, target: str) -> None:
    """Write the screen in the KinDEL layout (held-out CSVs with a leading index column, as pandas writes)."""
    from stages.core.io import write_parquet

    folder = Path(folder)
    write_parquet(screen.library, folder / library_path(target))
    for kind, frame in screen.splits.items():
        write_parquet(frame, folder / split_path(target, kind))
    for kind, frame in screen.heldout.items():
        path = folder / heldout_path(target, kind)
        path.parent.mkdir(parents=True, exist_ok=True)
        frame.with_row_index("").write_csv(path)
