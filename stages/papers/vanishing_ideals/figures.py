"""Step `vanishing_ideals-figures`: accuracy vs % of convolutions removed (VI-Net, linear probe, random monomials,
full net; mean over seeds), parameters vs cut, and the first seed's class × generator mean G on test latents (the
own-class block ≈ 0); the metrics table and the DVC plot data. (Throughput vs cut: vanishing_ideals-timing.)
"""

from __future__ import annotations

import numpy as np
import polars as pl
from safetensors.numpy import load_file

from stages.core.context import StepContext
from stages.core.io import read_json, read_parquet
from stages.core.metrics import new_figure, save_figure, write_metrics, write_plot_data
from stages.papers.vanishing_ideals.params import VanishingIdealsParams

LINES = {"vinet": "VI-Net", "linear_probe": "linear probe", "random_monomials": "random monomials"}


def summary_table(results: pl.DataFrame, n_convs: int) -> pl.DataFrame:
    """Mean test accuracy, parameters and features per cut and method, with % of convolutions removed."""
    return (
        results.group_by("cut", "method")
        .agg(
            pl.col("test_accuracy").mean(),
            pl.col("test_accuracy").std().alias("test_accuracy_sd"),
            pl.col("parameters").mean(),
            pl.col("features").mean(),
            pl.col("psi").first(),
        )
        .with_columns(removed_pct=((n_convs - pl.col("cut")) * 100.0 / n_convs).round(2))
        .sort("cut", "method")
    )


def accuracy_png(table: pl.DataFrame, path) -> None:
    figure, axis = new_figure(5.2, 3.6)
    for method, label in LINES.items():
        rows = table.filter(pl.col("method") == method).sort("removed_pct")
        axis.plot(rows["removed_pct"], 100 * rows["test_accuracy"], "o-", label=label)
    full = table.filter(pl.col("method") == "full_net")
    axis.axhline(100 * float(full["test_accuracy"][0]), color="black", linestyle="--", label="full net")
    axis.set_xlabel("% of 3×3 convolutions removed")
    axis.set_ylabel("test accuracy (%)")
    axis.legend(fontsize=8)
    save_figure(figure, path)


def parameters_png(table: pl.DataFrame, path) -> None:
    figure, axis = new_figure(5.2, 3.6)
    for method, label in LINES.items():
        rows = table.filter(pl.col("method") == method).sort("cut")
        axis.plot(rows["cut"], rows["parameters"], "o-", label=label)
    full = table.filter(pl.col("method") == "full_net")
    axis.axhline(float(full["parameters"][0]), color="black", linestyle="--", label="full net")
    axis.set_xlabel("cut (3×3 convolutions kept)")
    axis.set_ylabel("parameters")
    axis.legend(fontsize=8)
    save_figure(figure, path)


def vanishing_png(matrix: np.ndarray, labels: np.ndarray, cut: int, path) -> None:
    """Rows: kept generators (grouped by their class); columns: test classes; colour: mean G = |p| (log)."""
    figure, axis = new_figure(4.8, 5.2)
    image = axis.imshow(np.log10(np.maximum(matrix, 1e-4)), aspect="auto", cmap="viridis")
    boundaries = np.flatnonzero(np.diff(labels)) + 0.5
    for boundary in boundaries:
        axis.axhline(boundary, color="white", linewidth=0.5)
    axis.set_xlabel("test class")
    axis.set_ylabel("kept generator (grouped by its class)")
    axis.set_title(f"log10 mean G(z) on test, cut {cut} (as fitted)")
    figure.colorbar(image, ax=axis)
    save_figure(figure, path)


def run(ctx: StepContext) -> None:
    params: VanishingIdealsParams = ctx.params
    results = read_parquet(ctx.input("results"))
    generators = read_parquet(ctx.input("generators"))
    vanishing = load_file(str(ctx.input("vanishing")))
    n_convs = int(read_json(ctx.input("prepared"))["convolutions"])
    table = summary_table(results, n_convs)
    folder = ctx.output("figures")
    accuracy_png(table, folder / "accuracy_vs_removed.png")
    parameters_png(table, folder / "parameters_vs_cut.png")
    for cut in params.grid.fit.cuts:
        labels = generators.filter(pl.col("cut") == cut).sort("index")["label"].to_numpy()
        vanishing_png(vanishing[str(cut)], labels, cut, folder / f"generator_values_cut{cut}.png")
    write_metrics(
        {
            f"{row['method']}@{row['cut']}": {
                "test_accuracy": round(row["test_accuracy"], 4),
                "parameters": int(row["parameters"]),
                "features": int(row["features"]),
            }
            for row in table.iter_rows(named=True)
        },
        ctx.output("metrics"),
    )
    write_plot_data(
        table.select("cut", "removed_pct", "method", "test_accuracy", "parameters"), ctx.output("plot_data")
    )
    ctx.log(f"figures in {folder}")
