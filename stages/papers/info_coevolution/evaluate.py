"""Step `info_coevolution-evaluate`: annotations needed to reach full-label accuracy, stop points, figures.

Full-label accuracy is the mean of the reference runs (at least three seeds), with its t interval. A run
reaches it at the first round whose test accuracy is within `claims.tolerance` of that mean; the same count is
also taken against the interval's two ends (`_lenient`: lower end, `_strict`: upper end), so the claims can
tell whether a verdict depends on where full-label accuracy lies within its seed noise. The stop point is the
round after which the strategy's own stop rule fired.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from stages.core.claims import t_interval
from stages.core.context import StepContext
from stages.core.io import read_json, read_parquet, write_parquet
from stages.core.metrics import new_figure, save_figure, write_metrics, write_plot_data


def reference_accuracy(reference: dict, confidence: float) -> dict[str, float]:
    """Mean full-label accuracy over the reference runs and the ends of its t interval."""
    values = [float(run["accuracy"]) for run in reference["runs"]]
    mean = sum(values) / len(values)
    lower, upper = t_interval(values, confidence) or (mean, mean)
    return {"mean": mean, "lower": lower, "upper": upper}


def run_summary(
    curves: pl.DataFrame, reference: dict[str, float], tolerance: float, pool_size: int
) -> pl.DataFrame:
    """Per (strategy, seed): annotations to reach full-label accuracy (at the mean and at both interval
    ends), stop point, final state."""
    rows = curves.sort(["strategy", "seed", "round"])

    def first_reaching(target: float, name: str) -> pl.Expr:
        return pl.col("n_annotated").filter(pl.col("accuracy") >= target - tolerance).min().alias(name)

    return (
        rows.group_by(["strategy", "seed"], maintain_order=True)
        .agg(
            pl.col("training").first(),
            first_reaching(reference["mean"], "annotations_to_full"),
            first_reaching(reference["lower"], "annotations_to_full_lenient"),
            first_reaching(reference["upper"], "annotations_to_full_strict"),
            pl.col("n_annotated").filter(pl.col("stopped")).min().alias("stopped_at"),
            pl.col("accuracy").filter(pl.col("stopped")).first().alias("accuracy_at_stop"),
            pl.col("n_annotated").last().alias("final_annotations"),
            pl.col("accuracy").last().alias("final_accuracy"),
        )
        .with_columns(
            pl.lit(reference["mean"]).alias("full_accuracy"), pl.lit(pool_size, pl.Int64).alias("pool_size")
        )
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


DIAGNOSTICS = (
    "mask_rate",
    "temperature",
    "confident_share",
    "confident_precision",
    "vote_radius",
    "vote_inside",
    "rescore_radius",
    "rescore_inside",
)


def _rounded(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(float(value), digits)


def metrics_from(summary: pl.DataFrame, curves: pl.DataFrame, reference: dict[str, float]) -> dict:
    """metrics.json: the full-label accuracy (mean and interval); per run kind the mean annotations to
    full-label accuracy (null unless every seed reached it), the stop point, the final accuracy, and the mean
    over rounds and seeds of the view's diagnostics (temperature, radii, share of neighbours inside them...)."""
    metrics: dict = {"full_label_accuracy": {key: round(value, 5) for key, value in reference.items()}}
    for strategy, rows in summary.group_by("strategy", maintain_order=True):
        reached = rows["annotations_to_full"].drop_nulls()
        stops = rows["stopped_at"].drop_nulls()
        rounds = curves.filter(pl.col("strategy") == strategy[0])
        metrics[str(strategy[0])] = {
            "training": rows["training"][0],
            "seeds_reaching_full": len(reached),
            "annotations_to_full": float(reached.mean()) if len(reached) == rows.height else None,
            "seeds_stopped": len(stops),
            "stop_annotations": float(stops.mean()) if len(stops) else None,
            "final_accuracy": round(float(rows["final_accuracy"].mean()), 5),
            "mean_over_rounds": {name: _rounded(rounds[name].mean()) for name in DIAGNOSTICS},
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
    claims = ctx.params.claims
    reference = reference_accuracy(read_json(ctx.input("reference")), claims.confidence)
    pool_size = pl.scan_parquet(ctx.input("pool")).select(pl.len()).collect().item()
    summary = run_summary(curves, reference, claims.tolerance, pool_size)
    means = mean_curves(curves)
    for row in summary.iter_rows(named=True):
        ctx.log(
            f"{row['strategy']:>26} seed {row['seed']}: full {row['full_accuracy']:.4f}, reached at "
            f"{row['annotations_to_full']}, stopped at {row['stopped_at']}"
        )
    write_parquet(summary, ctx.output("summary"))
    write_metrics(metrics_from(summary, curves, reference), ctx.output("metrics"))
    write_plot_data(means, ctx.output("plot_data"))
    plot_curves(curves, means, summary, claims.tolerance, ctx.output("figure"))
