"""A user's table file (Parquet or CSV) read for an `icml25` command, with errors that name the file."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import polars as pl

from stages.core.errors import DataValidationError

TABLE_SUFFIXES = (".parquet", ".csv")


def read_user_table(path: str | Path, suffixes: Iterable[str] = TABLE_SUFFIXES) -> pl.DataFrame:
    """The Parquet or CSV file at `path` as a frame; an unsupported suffix, a missing file or an unreadable
    one is a `DataValidationError` naming the file (exit 2 from the CLI)."""
    path, suffixes = Path(path), tuple(suffixes)
    if path.suffix.lower() not in suffixes:
        raise DataValidationError(
            f"{path}: unsupported file type {path.suffix!r}; use {' or '.join(suffixes)}"
        )
    if not path.is_file():
        raise DataValidationError(f"{path}: file not found")
    try:
        return pl.read_parquet(path) if path.suffix.lower() == ".parquet" else pl.read_csv(path)
    except Exception as error:  # polars raises several types for an unreadable file
        raise DataValidationError(f"{path}: cannot read ({type(error).__name__}: {error})") from None
