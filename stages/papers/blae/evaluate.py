"""Step `blae-evaluate`: per-cell summaries (metrics.json, a CSV for `dvc plots`) and the two figures:
mean cumulative regret vs t per algorithm in every cell, and batches vs T with the ⌈log₂log₂T⌉ + 2 line."""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet
from stages.core.metrics import new_figure, save_figure, write_metrics, write_plot_data
from stages.methods.bandits.blae import batch_bound


def cell_summary(runs: pl.DataFrame) -> pl.DataFrame:
    """Per cell and algorithm: mean final regret ± standard error over seeds, batches, best-arm losses."""
    return (
        runs.group_by("cell", "algorithm")
        .agg(
            pl.col("final_regret").mean().alias("mean_regret"),
            (pl.col("final_regret").std() / pl.len().sqrt()).alias("se_regret"),
            pl.col("batches").mean().alias("mean_batches"),
            pl.col("batches").max().alias("max_batches"),
            pl.col("best_arm_eliminated").cast(pl.Float64).mean().alias("best_arm_lost_rate"),
            pl.len().alias("seeds"),
        )
        .sort("cell", "algorithm")
    )


def metrics(runs: pl.DataFrame, summary: pl.DataFrame) -> dict:
    horizon = int(runs["horizon"][0])
    cells: dict = {}
    for row in summary.iter_rows(named=True):
        cells.setdefault(row["cell"], {})[row["algorithm"]] = {
            "mean_regret": round(row["mean_regret"], 3),
            "se_regret": round(row["se_regret"] or 0.0, 3),
            "mean_batches": round(row["mean_batches"], 3),
            "max_batches": int(row["max_batches"]),
            **(
                {"best_arm_lost_rate": round(row["best_arm_lost_rate"], 3)}
                if row["best_arm_lost_rate"] is not None
                else {}
            ),
        }
    return {"horizon": horizon, "batch_bound": batch_bound(horizon), "cells": cells}


def regret_figure(curves: pl.DataFrame, path) -> None:
    mean = curves.group_by("cell", "algorithm", "t").agg(
        pl.col("cumulative_regret").mean().alias("mean"),
        (pl.col("cumulative_regret").std() / pl.len().sqrt()).fill_null(0.0).alias("se"),
    )
    cells = sorted(mean["cell"].unique())
    columns = min(3, len(cells))
    rows = math.ceil(len(cells) / columns)
    figure, axes = new_figure(4.2 * columns, 3.2 * rows, ncols=columns, nrows=rows)
    axes = np.atleast_1d(axes).ravel()
    algorithms = sorted(mean["algorithm"].unique())
    colours = {name: f"C{index}" for index, name in enumerate(algorithms)}  # the same colour in every panel
    for axis, cell in zip(axes, cells, strict=False):
        for algorithm in algorithms:
            line = mean.filter((pl.col("cell") == cell) & (pl.col("algorithm") == algorithm)).sort("t")
            if line.height:
                t, m, s = line["t"].to_numpy(), line["mean"].to_numpy(), line["se"].to_numpy()
                axis.plot(t, m, label=algorithm, color=colours[algorithm])
                axis.fill_between(t, m - s, m + s, alpha=0.2, color=colours[algorithm])
        axis.set_title(f"{cell} (mean ± s.e. over seeds)", fontsize=9)
        axis.set_xlabel("t")
        axis.set_ylabel("cumulative regret")
    for axis in axes[len(cells) :]:
        axis.set_visible(False)
    handles = [axes[0].plot([], [], color=colours[name], label=name)[0] for name in algorithms]
    axes[0].legend(handles=handles, fontsize=7)
    save_figure(figure, path)


def batches_figure(horizons: pl.DataFrame, path) -> None:
    figure, axis = new_figure(5.5, 3.8)
    mean = horizons.group_by("algorithm", "horizon").agg(pl.col("batches").mean()).sort("horizon")
    for algorithm in sorted(mean["algorithm"].unique()):
        line = mean.filter(pl.col("algorithm") == algorithm)
        axis.plot(line["horizon"], line["batches"], marker="o", label=algorithm)
    grid = np.unique(np.geomspace(horizons["horizon"].min(), horizons["horizon"].max(), 50).astype(int))
    axis.step(grid, [batch_bound(int(t)) for t in grid], "k--", where="post", label="⌈log₂log₂T⌉ + 2")
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlabel("horizon T")
    axis.set_ylabel("batches (mean over seeds)")
    axis.legend(fontsize=7)
    save_figure(figure, path)


def run(ctx: StepContext) -> None:
    runs = read_parquet(ctx.input("runs"))
    summary = cell_summary(runs)
    write_metrics(metrics(runs, summary), ctx.output("metrics"))
    write_plot_data(
        summary.select("cell", "algorithm", "mean_regret", "se_regret", "mean_batches"),
        ctx.output("plot_data"),
    )
    regret_figure(read_parquet(ctx.input("curves")), ctx.output("regret_figure"))
    batches_figure(read_parquet(ctx.input("horizons")), ctx.output("batches_figure"))
