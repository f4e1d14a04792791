"""Step `dd3d-figures`: distilled clouds beside real ones per class, OA per method and setting, OA vs
distillation iterations, memory by resolution, the OA table and the curve (metrics.json), the DVC plot data."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet
from stages.core.metrics import write_metrics, write_plot_data
from stages.datasets.point_clouds import SHAPES
from stages.methods.distillation.figures import bars_png, curves_png, line_png, scatter_grid_png
from stages.papers.dd3d.params import DD3DParams
from stages.papers.dd3d.runs import LONG, ROTATOR, iterations, setting_arrays


def oa_table(results: pl.DataFrame) -> pl.DataFrame:
    """Mean and standard deviation over seeds of final and max OA per run (each set at its last iteration)."""
    return (
        results.filter("final")
        .group_by("run", "method", "setting", "cpc", "distil_points", maintain_order=True)
        .agg(
            pl.col("final_oa").mean().alias("final_oa"),
            pl.col("final_oa").std().alias("final_oa_sd"),
            pl.col("max_oa").mean().alias("max_oa"),
            pl.len().alias("seeds"),
        )
    )


def oa_curve(results: pl.DataFrame, points: int) -> pl.DataFrame:
    """OA vs iterations of the so3_rotator cpc 1 distillations at `points`: mean, sd and seeds per method."""
    return (
        results.filter(
            (pl.col("setting") == ROTATOR)
            & (pl.col("cpc") == 1)
            & (pl.col("distil_points") == points)
            & (pl.col("iteration") > 0)
        )
        .group_by("method", "iteration")
        .agg(
            pl.col("final_oa").mean().alias("oa"),
            pl.col("final_oa").std().fill_null(0.0).alias("oa_sd"),
            pl.col("final_oa").alias("per_seed"),
        )
        .sort("method", "iteration")
    )


def curve_figure(results: pl.DataFrame, params: DD3DParams, path) -> pl.DataFrame:
    """The OA-vs-iterations figure (DD3D, DD3D's long run, fixed-xyz DC; random real and full data as levels)."""
    curve = oa_curve(results, params.grid.distill.points)
    names = {"dd3d": "DD3D (all seeds)", LONG: "DD3D, long run (first seed)", "dc_xyz": "fixed-xyz DC"}
    series = {
        names[method]: (rows["iteration"].to_list(), rows["oa"].to_list(), rows["oa_sd"].to_list())
        for method in names
        if (rows := curve.filter(pl.col("method") == method)).height
    }
    levels = {}
    for method, cpc, label in (("random", 1, "random real, cpc 1"), ("full", 0, "full data")):
        chosen = results.filter(
            (pl.col("method") == method) & (pl.col("setting") == ROTATOR) & (pl.col("cpc") == cpc)
        )
        if chosen.height:
            levels[label] = float(chosen["final_oa"].mean())
    curves_png(
        series, levels, path, "so3_rotator, cpc 1: OA vs iterations (mean ± sd)", iterations(params, 1)
    )
    return curve


def first_per_class(clouds: np.ndarray, labels: np.ndarray) -> list[np.ndarray]:
    """The first cloud of each class 0..C−1."""
    return [clouds[np.flatnonzero(labels == c)[0]] for c in range(int(labels.max()) + 1)]


def run(ctx: StepContext) -> None:
    params: DD3DParams = ctx.params
    table, distilled = read_parquet(ctx.input("clouds")), read_parquet(ctx.input("distilled"))
    results, log = read_parquet(ctx.input("results")), read_parquet(ctx.input("distil_log"))
    folder = ctx.output("figures")
    folder.mkdir(parents=True, exist_ok=True)
    first_seed = params.grid.seeds[0]
    names = list(SHAPES)
    for setting in params.grid.design.settings:
        real, labels = setting_arrays(table, setting, "train")
        rows = {"real": first_per_class(real, labels)}
        for method in ("dd3d", "dc_xyz"):
            chosen = distilled.filter(
                (pl.col("method") == method)
                & (pl.col("setting") == setting)
                & (pl.col("cpc") == 1)
                & (pl.col("distil_points") == params.grid.distill.points)
                & (pl.col("seed") == first_seed)
            ).sort("cloud")
            if chosen.height:
                flat = np.asarray(chosen["points"].to_numpy(), dtype=np.float32).reshape(chosen.height, -1, 3)
                rows[method] = first_per_class(flat, chosen["label"].to_numpy())
        scatter_grid_png(rows, names, folder / f"clouds_{setting}_cpc1_seed{first_seed}.png")
    summary = oa_table(results)
    groups: dict[str, dict[str, tuple[float, float]]] = {}
    for row in summary.iter_rows(named=True):
        group = f"{row['setting']}\ncpc {row['cpc'] or 'all'}" + (
            f"\n@{row['distil_points']}"
            if row["distil_points"] not in (0, params.grid.distill.points)
            else ""
        )
        groups.setdefault(group, {})[row["method"]] = (row["final_oa"], row["final_oa_sd"] or 0.0)
    bars_png(groups, folder / "oa_by_method.png", "Final-epoch test OA (mean ± sd over seeds)", "OA (%)")
    curve = curve_figure(results, params, folder / "oa_vs_iterations.png")
    memory = (
        log.filter(
            (pl.col("method") == "dd3d")
            & (pl.col("setting") == ROTATOR)
            & (pl.col("cpc") == 1)
            & (pl.col("iteration") == 0)
        )
        .group_by("distil_points")
        .agg((pl.col("saved_bytes").mean() / 2**20).alias("saved_mib"))
        .sort("distil_points")
    )
    if memory.height:
        line_png(
            memory["distil_points"].to_list(),
            memory["saved_mib"].to_list(),
            folder / "memory_by_resolution.png",
            "Autograd-saved memory of one outer step (cpc 1)",
            "distillation points",
            "MiB",
        )
    write_metrics(
        {
            "oa": {
                row["run"]: {"final": round(row["final_oa"], 2), "max": round(row["max_oa"], 2)}
                for row in summary.iter_rows(named=True)
            },
            "oa_vs_iterations": {
                f"{row['method']}@{row['iteration']}": {
                    "mean": round(row["oa"], 2),
                    "per_seed": [round(v, 2) for v in row["per_seed"]],
                }
                for row in curve.iter_rows(named=True)
            },
            "saved_mib_by_points": {
                str(row["distil_points"]): round(row["saved_mib"], 3) for row in memory.iter_rows(named=True)
            },
        },
        ctx.output("metrics"),
    )
    write_plot_data(summary.select("run", "final_oa", "max_oa", "seeds"), ctx.output("plot_data"))
    ctx.log(f"figures in {folder}")
