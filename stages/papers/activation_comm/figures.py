"""Step `activation_comm-figures`: gold log-probability vs k = j (dev and test sweep), test accuracy vs FLOPs per
method and game, and the accuracy / log-probability / FLOPs table (metrics.json, a CSV for `dvc plots`)."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet
from stages.core.metrics import new_figure, save_figure, write_metrics, write_plot_data


def method_table(results: pl.DataFrame) -> pl.DataFrame:
    """Accuracy, mean gold log-probability, mean FLOPs and mean token counts per game and method."""
    return (
        results.group_by("game", "method")
        .agg(
            pl.col("correct").cast(pl.Float64).mean().alias("accuracy"),
            pl.col("logprob").mean().alias("logprob"),
            pl.col("flops").mean().alias("flops"),
            *(pl.col(c).cast(pl.Float64).mean().alias(f"mean_{c}") for c in ("p_a", "p_b", "m", "t")),
            pl.len().alias("items"),
        )
        .sort("game", "method")
    )


def sweep_table(sweep: pl.DataFrame) -> pl.DataFrame:
    """Mean gold log-probability per split, game and depth."""
    if "split" not in sweep.columns:
        sweep = sweep.with_columns(split=pl.lit("dev"))
    return (
        sweep.group_by("split", "game", "depth").agg(pl.col("logprob").mean()).sort("split", "game", "depth")
    )


def layer_figure(table: pl.DataFrame, layers: int, path) -> None:
    """Mean log p(gold) vs k = j: dev items (the choice) and test items (the test of the choice)."""
    figure, axes = new_figure(8.4, 3.4, ncols=2)
    for axis, split in zip(axes, ("dev", "test"), strict=True):
        rows = table.filter(pl.col("split") == split)
        for game in rows["game"].unique(maintain_order=True):
            mine = rows.filter(pl.col("game") == game)
            axis.plot(mine["depth"], mine["logprob"], marker="o", label=game)
        axis.set(
            xlabel=f"k = j (of {layers} layers)",
            ylabel="mean log p(gold answer), f = replace",
            title=f"{split} items" + (" (selection)" if split == "dev" else " (test of the choice)"),
        )
        axis.legend(fontsize=7)
    save_figure(figure, path)


def flops_figure(table: pl.DataFrame, path) -> None:
    games = table["game"].unique(maintain_order=True).to_list()
    figure, axes = new_figure(4.4 * len(games), 3.6, ncols=len(games))
    for axis, game in zip(np.atleast_1d(axes), games, strict=True):
        rows = table.filter(pl.col("game") == game)
        axis.scatter(rows["flops"], rows["accuracy"])
        for row in rows.iter_rows(named=True):
            axis.annotate(row["method"], (row["flops"], row["accuracy"]), fontsize=7)
        axis.set_xscale("log")
        axis.set(title=game, xlabel="FLOPs per answered item (Eq. 1–2)", ylabel="test accuracy")
    save_figure(figure, path)


def run(ctx: StepContext) -> None:
    results, sweep = read_parquet(ctx.input("results")), read_parquet(ctx.input("sweep"))
    table = method_table(results)
    write_metrics(
        {
            game: {
                row["method"]: {
                    "accuracy": round(row["accuracy"], 4),
                    "logprob": round(row["logprob"], 4),
                    "flops": float(f"{row['flops']:.4g}"),
                }
                for row in table.filter(pl.col("game") == game).iter_rows(named=True)
            }
            for game in table["game"].unique(maintain_order=True)
        },
        ctx.output("metrics"),
    )
    write_plot_data(table.select("game", "method", "accuracy", "logprob", "flops"), ctx.output("plot_data"))
    figures = ctx.output("figures")
    layer_figure(sweep_table(sweep), int(sweep["layers"][0]), figures / "logprob_vs_layer.png")
    flops_figure(table, figures / "accuracy_vs_flops.png")
