"""Step `fdiv_losses-summarise`: one table of accuracy and support per task × loss, metrics and the figure."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_parquet
from stages.core.metrics import new_figure, save_figure, write_metrics, write_plot_data

SUMMARY_SCHEMA = {
    "task": pl.Utf8,
    "loss": pl.Utf8,
    "seed": pl.Int64,
    "score": pl.Float64,
    "support": pl.Float64,
}


def task_rows(
    classify: pl.DataFrame, pretrain: pl.DataFrame, sft: pl.DataFrame, distil: pl.DataFrame
) -> pl.DataFrame:
    """Long table: task, loss, seed, score (accuracy or exact match), support (null for SFT)."""
    frames = [
        classify.select(
            (pl.lit("digits_") + pl.col("model")).alias("task"),
            "loss",
            "seed",
            pl.col("accuracy").alias("score"),
            "support",
        ),
        pretrain.select(
            pl.lit("char_lm").alias("task"), "loss", "seed", pl.col("accuracy").alias("score"), "support"
        ),
        sft.select(
            pl.lit("sft_arithmetic").alias("task"),
            "loss",
            "seed",
            pl.col("exact_match").alias("score"),
            pl.lit(None, dtype=pl.Float64).alias("support"),
        ),
        distil.select(
            pl.lit("distillation").alias("task"), "loss", "seed", pl.col("accuracy").alias("score"), "support"
        ),
    ]
    return pl.concat([frame.cast(SUMMARY_SCHEMA) for frame in frames])


def summarise(rows: pl.DataFrame) -> pl.DataFrame:
    """Mean and std over seeds per task and loss."""
    return (
        rows.group_by(["task", "loss"])
        .agg(
            pl.col("score").mean().alias("mean_score"),
            pl.col("score").std().alias("std_score"),
            pl.col("support").mean().alias("mean_support"),
            pl.col("seed").n_unique().alias("seeds"),
        )
        .sort(["task", "loss"])
    )


def plot_accuracy(summary: pl.DataFrame, path: Path) -> None:
    """Grouped bars: score per loss, one group per task (± std over seeds)."""
    figure, axes = new_figure(9.0, 4.0)
    tasks = summary["task"].unique().sort().to_list()
    losses = summary["loss"].unique().sort().to_list()
    width = 0.8 / len(losses)
    for index, loss in enumerate(losses):
        rows = summary.filter(pl.col("loss") == loss)
        lookup = {row["task"]: row for row in rows.iter_rows(named=True)}
        positions = [t + index * width for t, task in enumerate(tasks) if task in lookup]
        heights = [lookup[task]["mean_score"] for task in tasks if task in lookup]
        errors = [lookup[task]["std_score"] or 0.0 for task in tasks if task in lookup]
        axes.bar(positions, heights, width, yerr=errors, capsize=2, label=loss)
    axes.set_xticks([t + 0.4 - width / 2 for t in range(len(tasks))], tasks, fontsize=8)
    axes.set_ylabel("test accuracy / exact match")
    axes.set_title("f-divergence losses: score per task and loss (mean ± std over seeds)")
    axes.legend(fontsize=7, ncols=4)
    axes.grid(axis="y", alpha=0.3)
    save_figure(figure, path)


def run(ctx: StepContext) -> None:
    """Collect every task's results into one table, metrics.json and the accuracy figure."""
    rows = task_rows(
        *(
            read_parquet(ctx.input(role))
            for role in ("classify_results", "results", "sft_results", "distil_results")
        )
    )
    summary = summarise(rows)
    for row in summary.iter_rows(named=True):
        ctx.log(f"{row['task']:>15} {row['loss']:>10}: {row['mean_score']:.4f} support {row['mean_support']}")
    write_parquet(rows.sort(["task", "loss", "seed"]), ctx.output("summary"))
    metrics: dict = {}
    for row in summary.iter_rows(named=True):
        metrics.setdefault(row["task"], {})[row["loss"]] = {
            "mean_score": round(row["mean_score"], 5),
            "mean_support": None if row["mean_support"] is None else round(row["mean_support"], 3),
        }
    write_metrics(metrics, ctx.output("metrics"))
    write_plot_data(summary, ctx.output("plot_data"))
    plot_accuracy(summary, ctx.output("accuracy_figure"))
