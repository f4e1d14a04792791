"""Step `dynamic_selection-evaluate`: accuracy and training time against full data, noise handling; figures.

Each run is paired with the full-data run of the same noise rate and seed (same initialisation): accuracy
gap = accuracy − full accuracy; time saving = 1 − run seconds / full seconds, where a run's seconds are its
consistency precompute (the consistency step's time for the scores it reads; 0 for methods that read none),
the per-epoch scoring and the training steps with their augmentation (test evaluation excluded). Times vary
from run to run; every other column is byte-identical on rerun.

For the claims, the summary also keeps each group's per-seed values (list columns `*_per_seed`, in the order of
`seed_list`), and a second, robust time saving from robust costs: precompute + Σ over the run's epochs of the
median epoch seconds among its epochs that kept the same number of samples (repeated timings of the same work
in one run, so one slow epoch cannot flip a verdict; InfoBatch's annealed full-data epochs form their own group).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_json, read_parquet, write_parquet
from stages.core.metrics import new_figure, save_figure, write_metrics, write_plot_data

KEY = ["noise_rate", "seed", "method", "ratio"]
GROUP = ["noise_rate", "method", "ratio"]
PER_SEED = (
    "accuracy",
    "accuracy_gap",
    "time_saving_robust",
    "suppression_precision",
    "flipped_selection_rate",
    "clean_selection_rate",
)


def robust_seconds(entry: dict) -> float:
    """Precompute + Σ epochs of the median epoch seconds among the run's epochs with the same n_kept."""
    epoch_seconds = np.add(entry["scoring_seconds"], entry["training_seconds"])
    kept = np.asarray(entry["n_kept"])
    total = entry["precompute_seconds"]
    for size in np.unique(kept):
        group = epoch_seconds[kept == size]
        total += float(np.median(group)) * len(group)
    return total


def timing_table(timings: dict) -> pl.DataFrame:
    """Per run: total and robust seconds, precompute seconds, scoring share and augmentation share."""
    rows = [
        {
            **{name: entry[name] for name in KEY},
            "seconds": entry["total_seconds"],
            "robust_seconds": robust_seconds(entry),
            "precompute_seconds": entry["precompute_seconds"],
            "scoring_share": sum(entry["scoring_seconds"]) / max(entry["total_seconds"], 1e-12),
            "augment_share": sum(entry["augment_seconds"]) / max(sum(entry["training_seconds"]), 1e-12),
        }
        for entry in timings["runs"]
    ]
    return pl.DataFrame(rows, schema_overrides={"seed": pl.Int64})


def paired_with_full(runs: pl.DataFrame, times: pl.DataFrame, full: str) -> pl.DataFrame:
    """Runs with their full-data partner's accuracy and seconds, the accuracy gap and the time saving."""
    joined = runs.join(times, on=KEY, how="left")
    reference = joined.filter(pl.col("method") == full).select(
        "noise_rate",
        "seed",
        pl.col("accuracy").alias("full_accuracy"),
        pl.col("seconds").alias("full_seconds"),
        pl.col("robust_seconds").alias("full_robust_seconds"),
    )
    return joined.join(reference, on=["noise_rate", "seed"], how="left").with_columns(
        (pl.col("accuracy") - pl.col("full_accuracy")).alias("accuracy_gap"),
        (1 - pl.col("seconds") / pl.col("full_seconds")).alias("time_saving"),
        (1 - pl.col("robust_seconds") / pl.col("full_robust_seconds")).alias("time_saving_robust"),
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
            pl.col("seconds").mean().alias("seconds_mean"),
            pl.col("time_saving").mean().alias("time_saving_mean"),
            pl.col("scoring_share").mean().alias("scoring_share_mean"),
            pl.col("augment_share").mean().alias("augment_share_mean"),
            pl.col("precompute_seconds").mean().alias("precompute_seconds_mean"),
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
    """metrics.json: per noise rate, per `method@ratio`, accuracy, gap to full, time saving, suppression."""
    metrics: dict = {}
    for row in summary.iter_rows(named=True):
        entry = {
            "accuracy": round(row["accuracy_mean"], 5),
            "accuracy_gap": round(row["accuracy_gap_mean"], 5),
            "time_saving": round(row["time_saving_mean"], 4),
            "precompute_seconds": round(row["precompute_seconds_mean"], 3),
        }
        if row["suppression_precision_mean"] is not None:
            entry["suppression_precision"] = round(row["suppression_precision_mean"], 4)
        metrics.setdefault(f"noise_{row['noise_rate']:g}", {})[f"{row['method']}@{row['ratio']:g}"] = entry
    return metrics


def plot_accuracy_vs_time(summary: pl.DataFrame, full: str, path: Path) -> None:
    """One panel per noise rate: mean accuracy (± std over seeds) against the mean training-time saving."""
    rates = summary["noise_rate"].unique().sort().to_list()
    figure, axes = new_figure(5.5 * len(rates), 4.4, ncols=len(rates))
    axes = axes if len(rates) > 1 else [axes]
    for panel, rate in zip(axes, rates, strict=True):
        rows = summary.filter(pl.col("noise_rate") == rate)
        reference = rows.filter(pl.col("method") == full)
        panel.axhline(reference["accuracy_mean"][0], color="black", linestyle="--", label=f"{full} data")
        for method in rows["method"].unique(maintain_order=True):
            points = rows.filter(pl.col("method") == method)
            line = panel.errorbar(points["time_saving_mean"], points["accuracy_mean"], yerr=points["accuracy_std"],
                                  marker="o", linestyle="", capsize=3, label=method)  # fmt: skip
            colour = line[0].get_color()
            for point in points.iter_rows(named=True):
                position = (point["time_saving_mean"], point["accuracy_mean"])
                panel.annotate(f"{point['ratio']:g}", position, textcoords="offset points", xytext=(4, 4),
                               fontsize=7, color=colour)  # fmt: skip
        panel.set_xlabel("training-time saving vs full data (labels: kept ratio)")
        panel.set_ylabel("test accuracy")
        panel.set_title(f"label noise {rate:.0%}")
        panel.grid(alpha=0.3)
        panel.legend(fontsize=7)
    save_figure(figure, path)


def plot_selection(summary: pl.DataFrame, noise_rate: float, path: Path) -> None:
    """Left: scoring overhead as a share of epoch time. Right: how often flipped vs clean samples were trained on."""
    figure, (overhead, noise) = new_figure(12, 4.4, ncols=2)
    rows = summary.filter(pl.col("noise_rate") == noise_rate)
    names = [f"{method}@{ratio:g}" for method, ratio in zip(rows["method"], rows["ratio"], strict=True)]
    positions = list(range(len(names)))
    overhead.bar(positions, (rows["scoring_share_mean"] * 100).to_list(), color="tab:orange")
    overhead.set_ylabel("per-epoch scoring, % of epoch time")
    overhead.set_title(f"selection overhead (noise {noise_rate:.0%})")
    width = 0.4
    noise.bar(
        [p - width / 2 for p in positions], rows["clean_selection_rate_mean"].to_list(), width, label="clean"
    )
    noise.bar([p + width / 2 for p in positions], rows["flipped_selection_rate_mean"].fill_null(0).to_list(), width,
              label="flipped", color="tab:red")  # fmt: skip
    noise.set_ylabel("share of epochs a sample was trained on")
    noise.set_title(f"flipped vs clean samples (noise {noise_rate:.0%})")
    noise.legend(fontsize=8)
    for panel in (overhead, noise):
        panel.set_xticks(positions, names, rotation=35, ha="right", fontsize=7)
        panel.grid(alpha=0.3, axis="y")
    save_figure(figure, path)


def run(ctx: StepContext) -> None:
    """Pair runs with full data, summarise, write summary, metrics, plot data and figures."""
    names = ctx.params.claims
    runs = read_parquet(ctx.input("runs"))
    paired = paired_with_full(runs, timing_table(read_json(ctx.input("timings"))), names.full)
    summary = summarise(paired)
    for row in summary.iter_rows(named=True):
        ctx.log(
            f"noise {row['noise_rate']:.0%} {row['method']:>32} @ {row['ratio']:.2f}: acc {row['accuracy_mean']:.4f} "
            f"(gap {row['accuracy_gap_mean']:+.4f}), time saving {row['time_saving_mean']:.1%}"
        )
    write_parquet(summary, ctx.output("summary"))
    write_metrics(metrics_from(summary), ctx.output("metrics"))
    write_plot_data(summary.select([*GROUP, "accuracy_mean", "time_saving_mean"]), ctx.output("plot_data"))
    plot_accuracy_vs_time(summary, names.full, ctx.output("figure"))
    plot_selection(summary, names.noise_rate, ctx.output("selection_figure"))
