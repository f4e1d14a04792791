"""Figures of a distillation: 3-D scatters of distilled clouds beside real ones, OA bars, memory by resolution."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from stages.core.metrics import new_figure, save_figure


def scatter_grid_png(
    rows: Mapping[str, Sequence[np.ndarray]], class_names: Sequence[str], path: str | Path, points: int = 256
) -> None:
    """One row per set (e.g. "distilled", "real"), one 3-D scatter per class (first `points` points)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = plt.figure(figsize=(1.8 * len(class_names), 1.9 * len(rows)))
    for r, (name, clouds) in enumerate(rows.items()):
        for c, cloud in enumerate(clouds):
            axis = figure.add_subplot(
                len(rows), len(class_names), r * len(class_names) + c + 1, projection="3d"
            )
            x = cloud[:points]
            axis.scatter(x[:, 0], x[:, 1], x[:, 2], s=1.5, c=x[:, 2], cmap="viridis")
            axis.set_axis_off()
            axis.set_xlim(-1, 1), axis.set_ylim(-1, 1), axis.set_zlim(-1, 1)
            if r == 0:
                axis.set_title(class_names[c], fontsize=8)
            if c == 0:
                axis.text2D(-0.15, 0.5, name, transform=axis.transAxes, rotation=90, va="center", fontsize=8)
    save_figure(figure, path)


def bars_png(
    groups: Mapping[str, Mapping[str, tuple[float, float]]], path: str | Path, title: str, y_label: str
) -> None:
    """Grouped bars: group → {bar: (mean, sd)}."""
    figure, axis = new_figure(max(6.0, 1.4 * len(groups)), 4.0)
    names = sorted({bar for bars in groups.values() for bar in bars})
    width = 0.8 / max(1, len(names))
    for i, name in enumerate(names):
        xs = [g for g, bars in enumerate(groups.values()) if name in bars]
        values = [bars[name] for bars in groups.values() if name in bars]
        axis.bar(
            [x + i * width for x in xs],
            [v[0] for v in values],
            width,
            yerr=[v[1] for v in values],
            label=name,
        )
    axis.set_xticks([g + 0.4 - width / 2 for g in range(len(groups))], list(groups), fontsize=8)
    axis.set_ylabel(y_label)
    axis.set_title(title)
    axis.legend(fontsize=7)
    save_figure(figure, path)


def line_png(
    xs: Sequence[float], ys: Sequence[float], path: str | Path, title: str, x_label: str, y_label: str
) -> None:
    """A single line with markers."""
    figure, axis = new_figure()
    axis.plot(xs, ys, marker="o")
    axis.set_xlabel(x_label)
    axis.set_ylabel(y_label)
    axis.set_title(title)
    save_figure(figure, path)


def curves_png(
    series: Mapping[str, tuple[Sequence[float], Sequence[float], Sequence[float]]],
    levels: Mapping[str, float],
    path: str | Path,
    title: str,
    marker: float | None = None,
) -> None:
    """OA vs distillation iterations: one line per series (x, mean, sd as a band), a dashed line per
    reference level (random real, full data) and a dotted vertical line at `marker` (the default's count)."""
    figure, axis = new_figure()
    for name, (xs, ys, sds) in series.items():
        x, y, sd = np.asarray(xs), np.asarray(ys), np.asarray(sds)
        axis.plot(x, y, marker="o", label=name)
        axis.fill_between(x, y - sd, y + sd, alpha=0.2)
    for name, level in levels.items():
        axis.axhline(
            level, linestyle="--", linewidth=1, label=name, color="grey" if "full" in name else "black"
        )
    if marker is not None:
        axis.axvline(marker, linestyle=":", color="red", label="default iterations")
    axis.set_xscale("log")
    axis.set_xlabel("distillation iterations (fresh networks)")
    axis.set_ylabel("test OA (%)")
    axis.set_title(title)
    axis.legend(fontsize=7)
    save_figure(figure, path)
