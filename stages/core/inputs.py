"""What a user-supplied file or folder must be, checked by the params gate before DVC deletes any output.

Each function returns problems (empty: fine), each naming the params key and the path, so the gate can
list them all at once. Sources (`Source.check`) and papers (`Paper.input_check`) compose them.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def file_problems(path: str | Path, key: str, suffixes: Iterable[str] = ()) -> list[str]:
    """`path` must be a readable file, with one of `suffixes` when given."""
    path, suffixes = Path(path), tuple(suffixes)
    if not path.exists():
        return [f"{key}: {path} not found"]
    if not path.is_file():
        return [f"{key}: {path} is not a file"]
    if suffixes and not path.name.endswith(suffixes):
        return [f"{key}: {path} is not a {' / '.join(suffixes)} file"]
    try:
        with path.open("rb") as handle:
            handle.read(1)
    except OSError as error:
        return [f"{key}: {path} cannot be read ({error.strerror})"]
    return []


def folder_problems(path: str | Path, key: str, required: Iterable[str] = ()) -> list[str]:
    """`path` must be a folder holding every file in `required` (names relative to it)."""
    path = Path(path)
    if not path.exists():
        return [f"{key}: {path} not found"]
    if not path.is_dir():
        return [f"{key}: {path} is not a folder"]
    missing = [name for name in required if not (path / name).is_file()]
    return [f"{key}: {path} lacks {', '.join(missing)}"] if missing else []


def parquet_problems(path: str | Path, key: str, columns: Iterable[str | None] = ()) -> list[str]:
    """`path` must be a readable Parquet file (whatever its name) holding every named column."""
    import pyarrow.parquet as pq

    problems = file_problems(path, key)
    if problems:
        return problems
    try:
        names = set(pq.read_schema(path).names)
    except Exception as error:  # pyarrow raises several types for a file that is not Parquet
        return [f"{key}: {path} is not a readable Parquet file ({str(error).splitlines()[0]})"]
    missing = [column for column in columns if column and column not in names]
    return [f"{key}: {path} has no column(s) {', '.join(missing)}"] if missing else []
