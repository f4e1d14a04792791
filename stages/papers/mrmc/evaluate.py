"""Step `mrmc-evaluate`: test accuracy of every trained model on the untouched test split, plus figures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import torch
from safetensors.torch import load_file

from stages.core.context import StepContext
from stages.core.evaluation import CLASSIFICATION
from stages.core.io import read_json, read_parquet, write_parquet
from stages.core.metrics import new_figure, save_figure, write_metrics, write_plot_data
from stages.core.schema import ColumnSpec, TableSchema
from stages.core.validate import ensure_valid
from stages.datasets.classification import to_arrays
from stages.models.config import TrainConfig
from stages.models.training import Standardizer, UnitScaler, build_model, predict
from stages.papers.mrmc.select import FULL
from stages.papers.mrmc.train import INDEX_FILE, STANDARDIZER_FILE, load_scaler

RESULTS_SCHEMA = TableSchema(
    name="mrmc results",
    columns=(
        ColumnSpec("method", "str"),
        ColumnSpec("budget", "float", min=0, max=1),
        ColumnSpec("seed", "int", min=0),
        ColumnSpec("n_train", "int", min=1),
        ColumnSpec("test_accuracy", "float", min=0, max=1),
    ),
)


def load_standardizer(models_dir: Path) -> Standardizer | UnitScaler:
    """The input scaling fitted on the pool by the train step."""
    return load_scaler(models_dir / STANDARDIZER_FILE)


def evaluate_models(models_dir: Path, test_inputs: torch.Tensor, test_labels: np.ndarray) -> pl.DataFrame:
    """Accuracy of every model listed in the models index."""
    index = read_json(models_dir / INDEX_FILE)
    arch = index["architecture"]
    rows = []
    for entry in index["runs"]:
        model = build_model(arch["in_dim"], arch["n_classes"], TrainConfig(**arch["config"]), seed=0)
        model.load_state_dict(load_file(models_dir / entry["file"]))
        accuracy = CLASSIFICATION.evaluate(test_labels, predicted=predict(model, test_inputs))["accuracy"]
        rows.append(
            {key: entry[key] for key in ("method", "budget", "seed", "n_train")} | {"test_accuracy": accuracy}
        )
    return pl.DataFrame(
        rows,
        schema={
            "method": pl.Utf8,
            "budget": pl.Float64,
            "seed": pl.Int64,
            "n_train": pl.Int64,
            "test_accuracy": pl.Float64,
        },
    )


def summarise(results: pl.DataFrame) -> pl.DataFrame:
    """Mean and std of test accuracy per method and budget (std 0 for a single seed)."""
    return (
        results.group_by(["method", "budget"])
        .agg(
            pl.col("test_accuracy").mean().alias("mean_accuracy"),
            pl.col("test_accuracy").std(ddof=0).alias("std_accuracy"),
            pl.col("seed").n_unique().alias("seeds"),
        )
        .sort(["method", "budget"])
    )


def metrics_from(summary: pl.DataFrame) -> dict:
    """metrics.json: `{method: {"b0.10": {"mean": .., "std": ..}}}` with `full` as the reference."""
    metrics: dict = {}
    for row in summary.iter_rows(named=True):
        key = "all" if row["method"] == FULL else f"b{row['budget']:.2f}"
        metrics.setdefault(row["method"], {})[key] = {
            "mean_accuracy": round(row["mean_accuracy"], 5),
            "std_accuracy": round(row["std_accuracy"], 5),
        }
    return metrics


def plot_accuracy(summary: pl.DataFrame, path: Path) -> None:
    """Accuracy vs budget per method (mean ± std over seeds), full-data accuracy as a dashed line."""
    figure, axes = new_figure()
    for method in summary["method"].unique().sort():
        rows = summary.filter(pl.col("method") == method).sort("budget")
        if method == FULL:
            axes.axhline(rows["mean_accuracy"][0], color="black", linestyle="--", label="full data")
            continue
        axes.errorbar(
            rows["budget"] * 100,
            rows["mean_accuracy"],
            yerr=rows["std_accuracy"],
            marker="o",
            capsize=3,
            label=method,
        )
    axes.set_xlabel("core-set budget (% of pool)")
    axes.set_ylabel("test accuracy")
    axes.set_title("MRMC vs core-set baselines")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    save_figure(figure, path)


def run(ctx: StepContext) -> None:
    """Evaluate, then write results, metrics, plot data and the figure."""
    models_dir = ctx.input("models")
    test = to_arrays(read_parquet(ctx.input("test")))
    results = evaluate_models(models_dir, load_standardizer(models_dir)(test.features), test.labels)
    ensure_valid(results, RESULTS_SCHEMA, "mrmc results")
    summary = summarise(results)
    for row in summary.iter_rows(named=True):
        ctx.log(
            f"{row['method']:>18} {row['budget']:.2f}: {row['mean_accuracy']:.4f} ± {row['std_accuracy']:.4f}"
        )
    write_parquet(results.sort(["method", "budget", "seed"]), ctx.output("results"))
    write_metrics(metrics_from(summary), ctx.output("metrics"))
    write_plot_data(summary.filter(pl.col("method") != FULL), ctx.output("plot_data"))
    plot_accuracy(summary, ctx.output("figure"))
