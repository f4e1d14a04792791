"""Step `dynamic_selection-evaluate`: accuracy against full data and noise handling; figures.

Each run is paired with the full-data run of the same noise rate and seed (same initialisation): accuracy
gap = accuracy − full accuracy. The summary also keeps each group's per-seed values (list columns
`*_per_seed`, in the order of `seed_list`) for the claims. Nothing here reads a wall-clock time, so every output
is byte-identical on rerun; training-time savings are the benchmark step's (`dynamic_selection-timing`).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_parquet
from stages.core.metrics import new_figure, save_figure, write_metrics, write_plot_data

KEY = ["noise_rate", "seed", "method", "ratio"]
GROUP = ["noise_rate", "method", "ratio"]
PER_SEED = (
    "accuracy",
    "accuracy_gap",
    "suppression_precision",
    "flipped_selection_rate",
    "clean_selection_rate",
)


def paired_with_full(runs: pl.DataFrame, full: str) -> pl.DataFrame:
    """Runs with their full-data partner's accuracy and the accuracy gap."""
    reference = runs.filter(pl.col("method") == full).select(
        "noise_rate", "seed", pl.col("accuracy").alias("full_accuracy")
    )
    return runs.join(reference, on=["noise_rate", "seed"], how="left").with_columns(
        (pl.col("accuracy") - pl.col("full_accuracy")).alias("accuracy_gap")
    )


def summarise(paired: pl.DataFrame) -> pl.DataFrame:
    """Mean (and spread) over seeds per noise rate, method and ratio, and the per-seed values as lists."""
    return (
        paired.sort(KEY)
        .group_by(GROUP, maintain_order=True)
        .agg(
            pl.len().alias("seeds"),
            pl.col("accuracy").mean().alias("accuracy_mean"),
            pl.col("accuracy").std(ddof=0).alias("accuracy_std"),
            pl.col("accuracy_gap").mean().alias("accuracy_gap_mean"),
            pl.col("accuracy_gap").min().alias("accuracy_gap_min"),
            pl.col("n_suppressed").mean().alias("suppressed_mean"),
            pl.col("suppression_precision").mean().alias("suppression_precision_mean"),
            pl.col("suppression_recall").mean().alias("suppression_recall_mean"),
            pl.col("flipped_selection_rate").mean().alias("flipped_selection_rate_mean"),
            pl.col("clean_selection_rate").mean().alias("clean_selection_rate_mean"),
            pl.col("seed").alias("seed_list"),
            *(pl.col(name).alias(f"{name}_per_seed") for name in PER_SEED),
        )
        .sort(GROUP)
    )


def metrics_from(summary: pl.DataFrame) -> dict:
    """metrics.json: per noise rate, per `method@ratio`, accuracy, gap to full, suppression precision."""
    metrics: dict = {}
    for row in summary.iter_rows(named=True):
        entry = {
            "accuracy": round(row["accuracy_mean"], 5),
            "accuracy_gap": round(row["accuracy_gap_mean"], 5),
        }
        if row["suppression_precision_mean"] is not None:
            entry["suppression_precision"] = round(row["suppression_precision_mean"], 4)
        metrics.setdefault(f"noise_{row['noise_rate']:g}", {})[f"{row['method']}@{row['ratio']:g}"] = entry
    return metrics


def plot_accuracy_against(summary: pl.DataFrame, full: str, x: str, x_label: str, path: Path) -> None:
    """One panel per noise rate: mean accuracy (± std over seeds) of each method against column `x`."""
    rates = summary["noise_rate"].unique().sort().to_list()
    figure, axes = new_figure(5.5 * len(rates), 4.4, ncols=len(rates))
    axes = axes if len(rates) > 1 else [axes]
    for panel, rate in zip(axes, rates, strict=True):
        rows = summary.filter(pl.col("noise_rate") == rate)
        reference = rows.filter(pl.col("method") == full)
        panel.axhline(reference["accuracy_mean"][0], color="black", linestyle="--", label=f"{full} data")
        for method in rows["method"].unique(maintain_order=True):
            points = rows.filter(pl.col("method") == method)
            line = panel.errorbar(points[x], points["accuracy_mean"], yerr=points["accuracy_std"],
                                  marker="o", linestyle="", capsize=3, label=method)  # fmt: skip
            colour = line[0].get_color()
            for point in points.iter_rows(named=True):
                position = (point[x], point["accuracy_mean"])
                panel.annotate(f"{point['ratio']:g}", position, textcoords="offset points", xytext=(4, 4),
                               fontsize=7, color=colour)  # fmt: skip
        panel.set_xlabel(f"{x_label} (labels: kept ratio)")
        panel.set_ylabel("test accuracy")
        panel.set_title(f"label noise {rate:.0%}")
        panel.grid(alpha=0.3)
        panel.legend(fontsize=7)
    save_figure(figure, path)


def plot_selection(summary: pl.DataFrame, noise_rate: float, path: Path) -> None:
    """How often flipped vs clean samples were trained on, per method and ratio."""
    figure, noise = new_figure(6.5, 4.4)
    rows = summary.filter(pl.col("noise_rate") == noise_rate)
    names = [f"{method}@{ratio:g}" for method, ratio in zip(rows["method"], rows["ratio"], strict=True)]
    positions = list(range(len(names)))
    width = 0.4
    noise.bar(
        [p - width / 2 for p in positions], rows["clean_selection_rate_mean"].to_list(), width, label="clean"
    )
    noise.bar([p + width / 2 for p in positions], rows["flipped_selection_rate_mean"].fill_null(0).to_list(), width,
              label="flipped", color="tab:red")  # fmt: skip
    noise.set_ylabel("share of epochs a sample was trained on")
    noise.set_title(f"flipped vs clean samples (noise {noise_rate:.0%})")
    noise.legend(fontsize=8)
    noise.set_xticks(positions, names, rotation=35, ha="right", fontsize=7)
    noise.grid(alpha=0.3, axis="y")
    save_figure(figure, path)


def run(ctx: StepContext) -> None:
    """Pair runs with full data, summarise, write summary, metrics, plot data and figures."""
    names = ctx.params.claims
    summary = summarise(paired_with_full(read_parquet(ctx.input("runs")), names.full))
    for row in summary.iter_rows(named=True):
        ctx.log(
            f"noise {row['noise_rate']:.0%} {row['method']:>32} @ {row['ratio']:.2f}: acc {row['accuracy_mean']:.4f} "
            f"(gap {row['accuracy_gap_mean']:+.4f})"
        )
    write_parquet(summary, ctx.output("summary"))
    write_metrics(metrics_from(summary), ctx.output("metrics"))
    write_plot_data(summary.select([*GROUP, "accuracy_mean", "accuracy_gap_mean"]), ctx.output("plot_data"))
    plot_accuracy_against(
        summary, names.full, "ratio", "share of samples kept per epoch", ctx.output("figure")
    )
    plot_selection(summary, names.noise_rate, ctx.output("selection_figure"))
