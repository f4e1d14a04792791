"""Step `info_coevolution-evaluate`: annotations needed to reach full-label accuracy, stop points, figures.

Full-label accuracy is the mean of the reference runs (at least three seeds), with its t interval. A run
*reaches* it at the first round from which its test accuracy stays within `claims.tolerance` of that mean for
the rest of the run (sustained, not a first crossing that falls back; `first_crossing` keeps the first round
within the tolerance for comparison). The same count is also taken against the interval's two ends
(`_lenient`: lower end, `_strict`: upper end), so the claims can tell whether a verdict depends on where
full-label accuracy lies within its seed noise. The stop point is the round after which the strategy's own stop
rule fired. The tolerance is reported next to the test-set standard error of full-label accuracy,
√(acc (1 − acc) / n_test), and the figure marks the majority-class accuracy (the pool's most frequent class
predicted for every test sample).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from stages.core.claims import t_interval
from stages.core.context import StepContext
from stages.core.io import read_json, read_parquet, write_parquet
from stages.core.metrics import new_figure, save_figure, write_metrics, write_plot_data
from stages.papers.info_coevolution.stop_rule import stop_threshold


def reference_accuracy(reference: dict, confidence: float) -> dict[str, float]:
    """Mean full-label accuracy over the reference runs and the ends of its t interval."""
    values = [float(run["accuracy"]) for run in reference["runs"]]
    mean = sum(values) / len(values)
    lower, upper = t_interval(values, confidence) or (mean, mean)
    return {"mean": mean, "lower": lower, "upper": upper}


@dataclass(frozen=True)
class EvaluationSplit:
    """What the report sets the tolerance and the curves against: the test split's size, the standard error
    of an accuracy at full-label level on it, and the majority-class accuracy."""

    size: int
    standard_error: float
    majority_accuracy: float


def split_noise(pool_labels: np.ndarray, test_labels: np.ndarray, full_accuracy: float) -> EvaluationSplit:
    """The test split's size, √(acc (1 − acc) / n) at full-label accuracy, and the accuracy of predicting the
    pool's most frequent class (chosen on the pool, never on the test labels) for every test sample."""
    n_test = len(test_labels)
    majority = int(np.bincount(pool_labels).argmax())
    error = math.sqrt(full_accuracy * (1 - full_accuracy) / n_test)
    return EvaluationSplit(n_test, error, float(np.mean(test_labels == majority)))


def run_summary(
    curves: pl.DataFrame, reference: dict[str, float], tolerance: float, pool_size: int
) -> pl.DataFrame:
    """Per (strategy, seed): annotations to reach full-label accuracy for good (at the mean and at both interval
    ends), the first crossing, stop point, remaining gain and final state."""
    rows = curves.sort(["strategy", "seed", "round"]).with_columns(
        pl.col("accuracy").reverse().cum_min().reverse().over(["strategy", "seed"]).alias("worst_from_here")
    )

    def sustained(target: float, name: str) -> pl.Expr:
        return pl.col("n_annotated").filter(pl.col("worst_from_here") >= target - tolerance).min().alias(name)

    first_crossing = pl.col("accuracy") >= reference["mean"] - tolerance
    return (
        rows.group_by(["strategy", "seed"], maintain_order=True)
        .agg(
            pl.col("training").first(),
            sustained(reference["mean"], "annotations_to_full"),
            sustained(reference["lower"], "annotations_to_full_lenient"),
            sustained(reference["upper"], "annotations_to_full_strict"),
            pl.col("n_annotated").filter(first_crossing).min().alias("first_crossing"),
            pl.col("n_annotated").filter(pl.col("stopped")).min().alias("stopped_at"),
            pl.col("accuracy").filter(pl.col("stopped")).first().alias("accuracy_at_stop"),
            pl.col("n_annotated").last().alias("final_annotations"),
            pl.col("accuracy").last().alias("final_accuracy"),
            pl.col("remaining_gain").drop_nulls().last().alias("final_remaining_gain"),
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


def metrics_from(
    summary: pl.DataFrame,
    curves: pl.DataFrame,
    reference: dict[str, float],
    test: EvaluationSplit,
    tolerance: float,
) -> dict:
    """metrics.json: the full-label accuracy (mean and interval), the tolerance beside the test-set standard
    error, the majority-class accuracy; per run kind the mean annotations to full-label accuracy (null unless
    every seed reached it for good), the stop point, the final accuracy and remaining gain, and the mean over
    rounds and seeds of the view's diagnostics (temperature, radii, share of neighbours inside them...)."""
    metrics: dict = {
        "full_label_accuracy": {key: round(value, 5) for key, value in reference.items()},
        "tolerance": tolerance,
        "test_size": test.size,
        "test_standard_error": round(test.standard_error, 5),
        "majority_class_accuracy": round(test.majority_accuracy, 5),
    }
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
            "final_remaining_gain": _rounded(rows["final_remaining_gain"].mean()),
            "mean_over_rounds": {name: _rounded(rounds[name].mean()) for name in DIAGNOSTICS},
        }
    return metrics


def plot_curves(curves: pl.DataFrame, means: pl.DataFrame, summary: pl.DataFrame, tolerance: float,
                test: EvaluationSplit, stop_gain: float, path: Path) -> None:  # fmt: skip
    """Left: accuracy vs annotations with full-label accuracy, its tolerance band beside ± the test-set standard
    error, the majority-class accuracy and the stop points. Right: remaining gain and the stop threshold."""
    figure, (accuracy_axes, gain_axes) = new_figure(11, 4.2, ncols=2)
    full = float(summary["full_accuracy"].mean())
    accuracy_axes.axhline(full, color="black", linestyle="--", label="full labels")
    accuracy_axes.axhspan(full - tolerance, full, color="grey", alpha=0.35, label=f"tolerance {tolerance:g}")
    accuracy_axes.axhspan(full - test.standard_error, full + test.standard_error, color="grey", alpha=0.12,
                          label=f"± test SE {test.standard_error:.3f} (n = {test.size:,})")  # fmt: skip
    lowest = float((means["accuracy_mean"] - means["accuracy_std"].fill_null(0.0)).min())
    bottom = min(lowest, full - test.standard_error) - 0.03
    shown = (
        test.majority_accuracy >= bottom - 0.12
    )  # far below the curves it would flatten them: say so instead
    bottom = min(bottom, test.majority_accuracy - 0.02) if shown else bottom
    accuracy_axes.axhline(
        test.majority_accuracy,
        color="grey",
        linestyle=":",
        label=f"majority class {test.majority_accuracy:.3f}" + ("" if shown else " (below the axis)"),
    )
    accuracy_axes.set_ylim(
        bottom, max(full + test.standard_error, float(means["accuracy_mean"].max())) + 0.02
    )
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
    gain_axes.axhline(
        stop_gain,
        color="red",
        linestyle=":",
        label=f"stop threshold {stop_gain:g} (the paper's absolute rule)",
    )
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
    pool_labels = pl.read_parquet(ctx.input("pool"), columns=["label"])["label"].to_numpy()
    test_labels = pl.read_parquet(ctx.input("test"), columns=["label"])["label"].to_numpy()
    test = split_noise(pool_labels, test_labels, reference["mean"])
    summary = run_summary(curves, reference, claims.tolerance, len(pool_labels)).with_columns(
        pl.lit(test.size, pl.Int64).alias("test_size"),
        pl.lit(test.standard_error).alias("test_standard_error"),
    )
    means = mean_curves(curves)
    ctx.log(
        f"tolerance {claims.tolerance} vs test-set standard error {test.standard_error:.4f} (n = {test.size}); "
        f"majority-class accuracy {test.majority_accuracy:.4f}"
    )
    for row in summary.iter_rows(named=True):
        ctx.log(
            f"{row['strategy']:>26} seed {row['seed']}: full {row['full_accuracy']:.4f}, reached for good at "
            f"{row['annotations_to_full']} (first crossing {row['first_crossing']}), stopped at {row['stopped_at']}"
        )
    write_parquet(summary, ctx.output("summary"))
    write_metrics(metrics_from(summary, curves, reference, test, claims.tolerance), ctx.output("metrics"))
    write_plot_data(means, ctx.output("plot_data"))
    stop_gain = stop_threshold(ctx.params)
    plot_curves(curves, means, summary, claims.tolerance, test, stop_gain, ctx.output("figure"))
