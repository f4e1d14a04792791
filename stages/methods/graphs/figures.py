"""Audit figures: score distributions per mode, the separability p-value matrix, complementarity per mode."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from stages.core.metrics import new_figure, save_figure

FIGURE_FILES = {
    "scores per mode": "figures/scores.png",
    "separability p-values": "figures/p_values.png",
    "complementarity": "figures/complementarity.png",
}
"""Where an audit's figures go, relative to its report (the report links them)."""


def plot_scores(runs: pl.DataFrame, modes: list[str], metric: str, path: Path) -> None:
    """One panel per dataset: the per-seed scores of every mode (GNN as boxes, baseline as grey dots)."""
    datasets = runs["dataset"].unique(maintain_order=True).to_list()
    figure, axes = new_figure(max(6.0, 0.9 * len(modes)), 3.2 * len(datasets), nrows=len(datasets))
    axes = np.atleast_1d(axes)
    positions = np.arange(len(modes))
    for panel, dataset in zip(axes, datasets, strict=True):
        own = runs.filter(pl.col("dataset") == dataset)
        for model, offset, colour in (("gnn", -0.15, "tab:blue"), ("baseline", 0.15, "tab:grey")):
            values = [
                own.filter((pl.col("model") == model) & (pl.col("mode") == mode))[metric].to_numpy()
                for mode in modes
            ]
            panel.boxplot(values, positions=positions + offset, widths=0.25, patch_artist=True,
                          boxprops={"facecolor": colour, "alpha": 0.4}, medianprops={"color": colour})  # fmt: skip
            for position, points in zip(positions, values, strict=True):
                panel.scatter(np.full(len(points), position + offset), points, s=8, color=colour, zorder=3)
        panel.set_xticks(positions, modes, rotation=30, ha="right", fontsize=8)
        panel.set_ylabel(f"test {metric}")
        panel.set_title(f"{dataset}: GNN (blue) and structure-blind baseline (grey) per mode")
        panel.grid(alpha=0.3, axis="y")
    save_figure(figure, path)


def plot_p_values(separability: pl.DataFrame, path: Path) -> None:
    """Adjusted p-values of the GNN's tests, datasets × perturbed modes, one panel per test; ✓ = separable."""
    own = separability.filter((pl.col("model") == "gnn") & (pl.col("mode_a") == "original"))
    datasets = own["dataset"].unique(maintain_order=True).to_list()
    modes = own["mode_b"].unique(maintain_order=True).to_list()
    tests = ("ks", "wilcoxon")
    figure, axes = new_figure(1.0 * len(modes) * len(tests) + 2, 0.6 * len(datasets) + 2.2, ncols=len(tests))
    separable = {
        (row["dataset"], row["mode_b"]): row["significant"]
        for row in own.group_by("dataset", "mode_b").agg(pl.col("significant").all()).iter_rows(named=True)
    }
    for panel, test in zip(np.atleast_1d(axes), tests, strict=True):
        matrix = np.ones((len(datasets), len(modes)))
        for row in own.filter(pl.col("test") == test).iter_rows(named=True):
            matrix[datasets.index(row["dataset"]), modes.index(row["mode_b"])] = row["p_adjusted"]
        image = panel.imshow(
            -np.log10(np.maximum(matrix, 1e-5)), cmap="viridis", vmin=0, vmax=5, aspect="auto"
        )
        for (i, j), value in np.ndenumerate(matrix):
            mark = " ✓" if separable.get((datasets[i], modes[j])) else ""
            panel.text(j, i, f"{value:.3g}{mark}", ha="center", va="center", fontsize=7, color="white")
        panel.set_xticks(range(len(modes)), modes, rotation=35, ha="right", fontsize=8)
        panel.set_yticks(range(len(datasets)), datasets, fontsize=8)
        panel.set_title(f"{test}: Bonferroni p, original vs mode")
        figure.colorbar(image, ax=panel, label="−log10 p")
    save_figure(figure, path)


def plot_complementarity(complementarity: pl.DataFrame, path: Path) -> None:
    """One panel per graph metric D_G: mean complementarity (± std over graphs) per dataset and feature mode."""
    datasets = complementarity["dataset"].unique(maintain_order=True).to_list()
    modes = complementarity["mode"].unique(maintain_order=True).to_list()
    metrics = complementarity["metric"].unique(maintain_order=True).to_list()
    figure, axes = new_figure(max(6.0, 1.6 * len(datasets)), 3.4 * len(metrics), nrows=len(metrics))
    width = 0.8 / len(modes)
    for panel, metric in zip(np.atleast_1d(axes), metrics, strict=True):
        for index, mode in enumerate(modes):
            rows = complementarity.filter((pl.col("mode") == mode) & (pl.col("metric") == metric))
            positions = [
                datasets.index(name) + (index - (len(modes) - 1) / 2) * width for name in rows["dataset"]
            ]
            panel.bar(
                positions, rows["mean"].to_list(), width, yerr=rows["std"].to_list(), capsize=3, label=mode
            )
        panel.set_xticks(range(len(datasets)), datasets)
        panel.set_ylabel("complementarity (0: redraws D_G)")
        panel.set_title(f"mode complementarity per feature mode, D_G = {metric}")
        panel.legend(fontsize=8)
        panel.grid(alpha=0.3, axis="y")
    save_figure(figure, path)
