"""Metrics JSON, DVC plot data (CSV) and matplotlib PNG figures (DVC's HTML plots need a CDN; PNGs don't)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from stages.core.io import atomic_path, write_json


def write_metrics(metrics: dict[str, Any], path: str | Path) -> None:
    """Write a DVC metrics file (flat or nested JSON of numbers)."""
    write_json(metrics, path)


def write_plot_data(frame: pl.DataFrame, path: str | Path) -> None:
    """Write a DVC plots data file as CSV (rows sorted by the caller for stable output)."""
    with atomic_path(Path(path)) as tmp:
        frame.write_csv(tmp, float_precision=6)


def new_figure(width: float = 6.0, height: float = 4.0, ncols: int = 1, nrows: int = 1):
    """A matplotlib figure and its axes (`nrows` × `ncols`) on the headless Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(nrows, ncols, figsize=(width, height), dpi=110)


def save_figure(figure, path: str | Path) -> None:
    """Save a figure as PNG atomically (no timestamp metadata, so reruns give the same bytes) and close it."""
    import matplotlib.pyplot as plt

    with atomic_path(Path(path)) as tmp:
        figure.tight_layout()
        figure.savefig(tmp, format="png", metadata={"Software": None})
    plt.close(figure)
