"""Step `a2i-figures`: attack success over training, F1 / sparsity / accuracy bars, one highlighted rationale
(RNP and A2I on the same test review, gold underlined), the metrics table and the plot data."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet
from stages.core.metrics import new_figure, save_figure, write_metrics, write_plot_data
from stages.papers.a2i.params import A2IParams

TABLE = ("f1", "precision", "recall", "sparsity", "accuracy", "attack_success", "selection_gap")
COLOURS = {"rnp": "tab:red", "a2i": "tab:blue", "full": "tab:gray"}


def metrics_table(runs: pl.DataFrame) -> dict:
    """Mean and std over seeds of every metric, per data set and objective."""
    out: dict = {}
    for (dataset, objective), rows in sorted(runs.group_by("dataset", "objective"), key=lambda item: item[0]):
        cell = {}
        for metric in TABLE:
            values = rows[metric].drop_nulls().to_numpy()
            if values.size:
                cell[metric] = {
                    "mean": round(float(values.mean()), 4),
                    "std": round(float(values.std(ddof=0)), 4),
                }
        out.setdefault(dataset, {})[objective] = cell
    return out


def attack_curves(history: pl.DataFrame) -> pl.DataFrame:
    """Mean dev attack success per data set, objective and epoch."""
    attacked = history.filter(pl.col("objective") != "full")
    return (
        attacked.group_by("dataset", "objective", "epoch")
        .agg(pl.col("attack_success").mean(), pl.col("accuracy").mean())
        .sort("dataset", "objective", "epoch")
    )


def attack_figure(curves: pl.DataFrame, path) -> None:
    datasets = sorted(curves["dataset"].unique().to_list())
    figure, axes = new_figure(3.4 * len(datasets), 3.0, ncols=len(datasets))
    for axis, dataset in zip(np.atleast_1d(axes), datasets, strict=True):
        for objective in ("rnp", "a2i"):
            rows = curves.filter((pl.col("dataset") == dataset) & (pl.col("objective") == objective))
            axis.plot(
                rows["epoch"],
                rows["attack_success"],
                marker="o",
                color=COLOURS[objective],
                label=objective.upper(),
            )
        axis.axhline(0.5, color="black", linestyle=":", linewidth=1)
        axis.set(title=dataset, xlabel="epoch", ylabel="attack success (dev)", ylim=(0, 1))
        axis.legend(fontsize=7)
    save_figure(figure, path)


def bars_figure(table: dict, path) -> None:
    metrics = ("f1", "sparsity", "accuracy")
    figure, axes = new_figure(3.4 * len(metrics), 3.0, ncols=len(metrics))
    datasets = sorted(table)
    for axis, metric in zip(axes, metrics, strict=True):
        for index, objective in enumerate(("rnp", "a2i", "full")):
            means = [table[d].get(objective, {}).get(metric, {}).get("mean", np.nan) for d in datasets]
            stds = [table[d].get(objective, {}).get(metric, {}).get("std", 0.0) for d in datasets]
            axis.bar(
                np.arange(len(datasets)) + 0.27 * index,
                means,
                0.27,
                yerr=stds,
                color=COLOURS[objective],
                label=objective,
            )
        axis.set_xticks(np.arange(len(datasets)) + 0.27, datasets, fontsize=7)
        axis.set(title=metric, ylim=(0, 1))
    axes[0].legend(fontsize=7)
    save_figure(figure, path)


def rationale_figure(examples: pl.DataFrame, path) -> None:
    """The first kept test review as text: RNP's and A2I's selections highlighted, gold tokens underlined."""
    figure, axis = new_figure(9.0, 2.8)
    axis.axis("off")
    rows = {row["objective"]: row for row in examples.filter(pl.col("row") == 0).iter_rows(named=True)}
    y = 0.92
    for objective in ("rnp", "a2i"):
        if objective not in rows:
            continue
        row = rows[objective]
        axis.text(
            0.0,
            y,
            f"{objective.upper()} (label {row['label']}, predicted {row['predicted']})",
            fontsize=8,
            weight="bold",
            transform=axis.transAxes,
        )
        y -= 0.1
        x = 0.0
        for token, selected, gold in zip(
            row["tokens"], row["selected"], row["gold"] or [0] * len(row["tokens"]), strict=True
        ):
            width = 0.012 * (len(token) + 1)
            if x + width > 1.0:
                x, y = 0.0, y - 0.1
            box = (
                {"facecolor": COLOURS[objective], "alpha": 0.35, "pad": 1, "edgecolor": "none"}
                if selected
                else None
            )
            text = axis.text(x, y, token, fontsize=8, transform=axis.transAxes, bbox=box, family="monospace")
            if gold:
                text.set_weight("bold")
                axis.plot(
                    [x, x + 0.012 * len(token)],
                    [y - 0.015, y - 0.015],
                    color="black",
                    linewidth=0.8,
                    transform=axis.transAxes,
                )
            x += width
        y -= 0.16
    axis.text(
        0.0,
        0.0,
        "shaded: selected rationale; bold underlined: planted gold span",
        fontsize=7,
        transform=axis.transAxes,
    )
    save_figure(figure, path)


def run(ctx: StepContext) -> None:
    params: A2IParams = ctx.params
    runs, history = read_parquet(ctx.input("runs")), read_parquet(ctx.input("history"))
    table = metrics_table(runs)
    write_metrics({"scale": params.scale, "table": table}, ctx.output("metrics"))
    curves = attack_curves(history)
    write_plot_data(curves, ctx.output("plot_data"))
    folder = ctx.output("figures")
    folder.mkdir(parents=True, exist_ok=True)
    attack_figure(curves, folder / "attack_success.png")
    bars_figure(table, folder / "f1_sparsity_accuracy.png")
    examples = read_parquet(ctx.input("examples"))
    if examples.height:
        rationale_figure(examples, folder / "rationale.png")
