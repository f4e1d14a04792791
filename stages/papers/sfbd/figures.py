"""Step `sfbd-figures`: mean distance per round per method (one figure per clean fraction and metric), the
first seed's sample grids per method, E_k beside the clean originals, the metrics table and the DVC plot data.
"""

from __future__ import annotations

import polars as pl
from safetensors.numpy import load_file

from stages.core.context import StepContext
from stages.core.io import read_json, read_parquet
from stages.core.metrics import write_metrics, write_plot_data
from stages.methods.diffusion.figures import denoised_png, distance_by_round_png, sample_grids_png
from stages.papers.sfbd.params import SFBDParams
from stages.papers.sfbd.run import ALL

METRICS = ("fd_feature", "fd_pixel", "kid_feature")
LINES = ("oracle", "clean_only", "sfbd", "noisy_only", "sfbd_from_noisy", "similar_sfbd")


def by_round(runs: pl.DataFrame) -> pl.DataFrame:
    """Mean and standard deviation over seeds of every metric per track, method, fraction and round."""
    images = runs.filter(pl.col("track") == "images")
    return (
        images.group_by("method", "fraction", "k")
        .agg(
            *[pl.col(metric).mean().alias(metric) for metric in METRICS],
            *[pl.col(metric).std().alias(f"{metric}_sd") for metric in METRICS],
            pl.col("steps").first(),
            pl.len().alias("seeds"),
        )
        .sort("fraction", "method", "k")
    )


def curves(table: pl.DataFrame, fraction: float, metric: str) -> dict:
    """Per method, rounds and mean metric at one fraction (the oracle from its no-fraction rows)."""
    result = {}
    for method in LINES:
        rows = table.filter((pl.col("method") == method) & pl.col("fraction").is_in([fraction, ALL])).sort(
            "k"
        )
        if rows.height:
            result[method] = (rows["k"].to_list(), rows[metric].to_list())
    return result


def fraction_label(fraction: float) -> str:
    """`4%` for a clean fraction, `all` for the models that use no fraction."""
    return "all" if fraction == ALL else f"{fraction:.0%}"


def run(ctx: StepContext) -> None:
    params: SFBDParams = ctx.params
    grid = params.grid
    runs, denoised = read_parquet(ctx.input("runs")), read_parquet(ctx.input("denoised"))
    kept, prepared = load_file(str(ctx.input("kept"))), read_json(ctx.input("prepared"))
    table = by_round(runs)
    folder = ctx.output("figures")
    K = grid.budget.iterations
    for fraction in grid.fractions:
        bounds = prepared["fractions"][str(fraction)]
        for metric in ("fd_feature", "fd_pixel"):
            references = {
                "clean-train floor": prepared["clean_train_floor"][metric],
                "noisy-data ceiling": bounds["noisy_ceiling"][metric],
            }
            distance_by_round_png(
                curves(table, fraction, metric),
                folder / f"{metric}_by_round_{fraction:.0%}.png".replace("%", "pct"),
                metric,
                f"{metric} against the clean test images, {fraction:.0%} clean (mean over {len(grid.seeds)} seeds)",
                references,
            )
        first = grid.seeds[0]
        grids = {}
        for method in LINES:
            for key in (f"samples/{fraction}/{method}/{K}", f"samples/{ALL}/{method}/{K}"):
                if key in kept:
                    grids[f"{method} (k={K})"] = kept[key]
        grids["clean-only start (k=0)"] = kept[f"samples/{fraction}/clean_only/0"]
        sample_grids_png(grids, folder / f"samples_{fraction:.0%}_seed{first}.png".replace("%", "pct"))
        rows = {"original": kept[f"originals/{fraction}"], "noisy y": kept[f"noisy/{fraction}"]}
        for k in range(1, K + 1):
            rows[f"E_{k} (SFBD)"] = kept[f"denoised/{fraction}/sfbd/{k}"]
        denoised_png(rows, folder / f"denoised_{fraction:.0%}_seed{first}.png".replace("%", "pct"))
    e_table = (
        denoised.group_by("method", "fraction", "k")
        .agg(pl.col("mse").mean(), pl.col("fd_pixel").mean(), pl.col("fd_feature").mean())
        .sort("fraction", "method", "k")
    )
    final = table.filter(pl.col("k") == K)
    write_metrics(
        {
            "round_K": {
                f"{row['method']}@{fraction_label(row['fraction'])}": {
                    metric: round(row[metric], 4) for metric in METRICS
                }
                for row in final.iter_rows(named=True)
            },
            "denoised_mse": {
                f"{row['method']}@{row['fraction']:.0%}@k{row['k']}": round(row["mse"], 5)
                for row in e_table.iter_rows(named=True)
            },
            "eval_cnn_test_accuracy": prepared["eval_cnn_test_accuracy"],
        },
        ctx.output("metrics"),
    )
    write_plot_data(table.select("method", "fraction", "k", "steps", *METRICS), ctx.output("plot_data"))
    ctx.log(f"figures in {folder}")
