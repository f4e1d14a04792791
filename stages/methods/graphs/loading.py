"""Graph-table folders as torch_geometric graphs, cached per process until the tables change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

_LOADED: dict[tuple[str, int], list[Any]] = {}


def load_pyg(folder: str | Path) -> list[Any]:
    """The torch_geometric graphs of a graph-table folder (cached per process until its tables change)."""
    from stages.datasets.graphs.table import TABLE_FILES, read_graph_tables, to_pyg

    folder = Path(folder).resolve()
    stamps = [
        (folder / f"{name}.parquet").stat().st_mtime_ns
        for name in TABLE_FILES
        if (folder / f"{name}.parquet").exists()
    ]
    key = (str(folder), max(stamps, default=0))
    if key not in _LOADED:
        _LOADED[key] = to_pyg(read_graph_tables(folder))
    return _LOADED[key]
