"""Step `info_coevolution-evaluate`: annotations needed to reach full-label accuracy, stop points, figures.

A run reaches full-label accuracy at the first round whose test accuracy is within `claims.tolerance` of the
same seed's full-label reference. The stop point is the round after which the strategy's own stop rule fired.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_json, read_parquet, write_parquet
from stages.core.metrics import new_figure, save_figure, write_metrics, write_plot_data


def reference_table(reference: dict) -> pl.DataFrame:
    """Full-label accuracy per seed."""
    return pl.DataFrame(reference["runs"]).select(
        pl.col("seed").cast(pl.Int64), pl.col("accuracy").alias("full_accuracy")
    )


def run_summary(
    curves: pl.DataFrame, reference: pl.DataFrame, tolerance: float, pool_size: int
) -> pl.DataFrame:
    """Per (strategy, seed): annotations to reach full-label accuracy, stop point, final state."""
    rows = curves.join(reference, on="seed", how="left").sort(["strategy", "seed", "round"])
    reached = pl.col("accuracy") >= pl.col("full_accuracy") - tolerance
    return (
        rows.group_by(["strategy", "seed"], maintain_order=True)
        .agg(
            pl.col("full_accuracy").first(),
            pl.col("n_annotated").filter(reached).min().alias("annotations_to_full"),
            pl.col("n_annotated").filter(pl.col("stopped")).min().alias("stopped_at"),
            pl.col("accuracy").filter(pl.col("stopped")).first().alias("accuracy_at_stop"),
            pl.col("n_annotated").last().alias("final_annotations"),
            pl.col("accuracy").last().alias("final_accuracy"),
        )
        .with_columns(pl.lit(pool_size, pl.Int64).alias("pool_size"))
    )


def mean_curves(curves: pl.DataFrame) -> pl.DataFrame:
    """Accuracy per strategy and round, mean and std over the seeds that reached that round."""
    return (
        curves.group_by(["strategy", "round"])
        .agg(
            pl.col("n_annotated").mean().alias("n_annotated"),
            pl.col("accuracy").mean().alias("accuracy_mean"),
            pl.col("accuracy").std(ddof=0).alias("accuracy_std"),
            pl.col("seed").n_unique().alias("seeds"),
        )
        .sort(["strategy", "round"])
    )


def metrics_from(summary: pl.DataFrame) -> dict:
    """metrics.json: per strategy, the mean annotations to full-label accuracy (null unless every seed reached
    it), the stop point and the final accuracy; plus the full-label accuracy."""
    metrics: dict = {"full_label_accuracy": round(float(summary["full_accuracy"].mean()), 5)}
    for strategy, rows in summary.group_by("strategy", maintain_order=True):
        reached = rows["annotations_to_full"].drop_nulls()
        stops = rows["stopped_at"].drop_nulls()
        metrics[str(strategy[0])] = {
            "seeds_reaching_full": len(reached),
            "annotations_to_full": float(reached.mean()) if len(reached) == rows.height else None,
            "seeds_stopped": len(stops),
            "stop_annotations": float(stops.mean()) if len(stops) else None,
            "final_accuracy": round(float(rows["final_accuracy"].mean()), 5),
        }
    return metrics


def plot_curves(curves: pl.DataFrame, means: pl.DataFrame, summary: pl.DataFrame, tolerance: float,
                path: Path) -> None:  # fmt: skip
    """Left: accuracy vs annotations with the full-label band and stop points. Right: remaining gain."""
    figure, (accuracy_axes, gain_axes) = new_figure(11, 4.2, ncols=2)
    full = float(summary["full_accuracy"].mean())
    accuracy_axes.axhline(full, color="black", linestyle="--", label="full labels")
    accuracy_axes.axhspan(full - tolerance, full, color="grey", alpha=0.2)
    for strategy in means["strategy"].unique().sort():
        rows = means.filter(pl.col("strategy") == strategy)
        line = accuracy_axes.errorbar(rows["n_annotated"], rows["accuracy_mean"], yerr=rows["accuracy_std"],
                                      marker=".", capsize=2, label=strategy)  # fmt: skip
        stops = summary.filter((pl.col("strategy") == strategy) & pl.col("stopped_at").is_not_null())
        if stops.height:
            accuracy_axes.scatter(stops["stopped_at"], stops["accuracy_at_stop"], marker="X", s=70,
                                  color=line[0].get_color(), edgecolor="black", zorder=5)  # fmt: skip
        gains = curves.filter((pl.col("strategy") == strategy) & pl.col("remaining_gain").is_not_null())
        for position, seed in enumerate(gains["seed"].unique().sort()):
            run = gains.filter(pl.col("seed") == seed)
            label = strategy if position == 0 else None
            gain_axes.plot(run["n_annotated"], run["remaining_gain"], marker=".", color=line[0].get_color(),
                           label=label)  # fmt: skip
    accuracy_axes.set_xlabel("annotations")
    accuracy_axes.set_ylabel("test accuracy")
    accuracy_axes.set_title("accuracy vs annotations (X: stop rule fired)")
    accuracy_axes.grid(alpha=0.3)
    accuracy_axes.legend(fontsize=8)
    gain_axes.axhline(1.0, color="red", linestyle=":", label="stop threshold")
    gain_axes.set_yscale("log")
    gain_axes.set_xlabel("annotations")
    gain_axes.set_ylabel("remaining gain after the round")
    gain_axes.set_title("Info-Coevolution's stop signal, per seed")
    gain_axes.grid(alpha=0.3)
    gain_axes.legend(fontsize=8)
    save_figure(figure, path)


def run(ctx: StepContext) -> None:
    """Summarise runs against the reference; write summary, metrics, plot data and the figure."""
    curves = read_parquet(ctx.input("curves"))
    reference = reference_table(read_json(ctx.input("reference")))
    pool_size = pl.scan_parquet(ctx.input("pool")).select(pl.len()).collect().item()
    summary = run_summary(curves, reference, ctx.params.claims.tolerance, pool_size)
    means = mean_curves(curves)
    for row in summary.iter_rows(named=True):
        ctx.log(
            f"{row['strategy']:>22} seed {row['seed']}: full {row['full_accuracy']:.4f}, reached at "
            f"{row['annotations_to_full']}, stopped at {row['stopped_at']}"
        )
    write_parquet(summary, ctx.output("summary"))
    write_metrics(metrics_from(summary), ctx.output("metrics"))
    write_plot_data(means, ctx.output("plot_data"))
    plot_curves(curves, means, summary, ctx.params.claims.tolerance, ctx.output("figure"))
