"""Step `gbrl-figures`: return vs env steps per task (mean over seeds of the episodes ending in each window,
with the uniform-random policy's level as a dashed line), return vs input-noise σ (absolute and relative to
each policy's clean return), the scores table (metrics) and the curves as plot data."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet
from stages.core.metrics import new_figure, save_figure, write_metrics, write_plot_data
from stages.papers.gbrl.params import GBRLParams

WINDOWS = 20


def binned_curves(curves: pl.DataFrame, steps: dict[str, int]) -> pl.DataFrame:
    """Per task, policy and window of env steps: mean return over the seeds' episodes ending in it."""
    frames = []
    for task, total in steps.items():
        width = max(total // WINDOWS, 1)
        frames.append(
            curves.filter(pl.col("task") == task)
            .with_columns(((pl.col("env_step") - 1) // width + 1).mul(width).alias("window_end"))
            .group_by("task", "policy", "window_end")
            .agg(pl.col("return").mean().alias("mean_return"), pl.len().alias("episodes"))
        )
    return pl.concat(frames).sort("task", "policy", "window_end")


def random_levels(runs: pl.DataFrame) -> dict[str, float]:
    """Per task, the uniform-random policy's mean return over seeds (the `random` rows of the runs table)."""
    rows = runs.filter(pl.col("policy") == "random").group_by("task").agg(pl.col("score").mean())
    return {task: float(score) for task, score in zip(rows["task"], rows["score"], strict=True)}


def returns_figure(binned: pl.DataFrame, random: dict[str, float], path) -> None:
    tasks = list(dict.fromkeys(binned["task"]))
    figure, axes = new_figure(4.2 * len(tasks), 3.4, ncols=len(tasks))
    for axis, task in zip(np.atleast_1d(axes), tasks, strict=True):
        rows = binned.filter(pl.col("task") == task)
        for policy in sorted(rows["policy"].unique()):
            line = rows.filter(pl.col("policy") == policy)
            axis.plot(line["window_end"], line["mean_return"], marker=".", label=policy)
        if task in random:
            axis.axhline(
                random[task], color="grey", linestyle="--", label=f"random policy ({random[task]:.3g})"
            )
        axis.set(xlabel="environment steps", ylabel="training episode return", title=task)
        axis.legend(fontsize=7)
    save_figure(figure, path)


def noise_figure(noise: pl.DataFrame, path) -> None:
    """Left: mean return per σ; right: the return relative to the policy's own clean return (the claim's
    quantity), mean over seeds of the per-seed ratio."""
    figure, (left, right) = new_figure(8.4, 3.4, ncols=2)
    means = noise.group_by("policy", "sigma").agg(pl.col("return").mean()).sort("policy", "sigma")
    per_seed = noise.group_by("policy", "seed", "sigma").agg(pl.col("return").mean())
    clean = per_seed.filter(pl.col("sigma") == 0.0).select("policy", "seed", pl.col("return").alias("clean"))
    relative = (
        per_seed.join(clean, on=["policy", "seed"])
        .with_columns((pl.col("return") / pl.col("clean")).alias("relative"))
        .group_by("policy", "sigma")
        .agg(pl.col("relative").mean())
        .sort("policy", "sigma")
    )
    for policy in sorted(means["policy"].unique()):
        line = means.filter(pl.col("policy") == policy)
        left.plot(line["sigma"], line["return"], marker="o", label=policy)
        line = relative.filter(pl.col("policy") == policy)
        right.plot(line["sigma"], line["relative"], marker="o", label=policy)
    left.set(
        xlabel="input noise σ (s + ε|s|, ε ~ N(0, σ))",
        ylabel="mean episode return",
        title=f"{noise['task'][0]} under input noise",
    )
    right.set(
        xlabel="input noise σ", ylabel="return / own clean return (mean over seeds)", title="relative return"
    )
    left.legend(fontsize=7)
    save_figure(figure, path)


def scores(runs: pl.DataFrame, noise: pl.DataFrame) -> dict:
    """Mean score (last 100 training episodes) and trees per task × policy; mean return per noise σ."""
    table = (
        runs.group_by("task", "policy")
        .agg(
            pl.col("score").mean().round(4),
            pl.col("score").std().round(4).alias("score_std"),
            pl.col("trees").mean(),
            pl.col("parameters").mean(),
            pl.col("model_bytes").mean(),
        )
        .sort("task", "policy")
    )
    out: dict = {}
    for row in table.iter_rows(named=True):
        out.setdefault(row["task"], {})[row["policy"]] = {
            key: row[key] for key in ("score", "score_std", "trees", "parameters", "model_bytes")
        }
    robustness = (
        noise.group_by("policy", "sigma").agg(pl.col("return").mean().round(3)).sort("policy", "sigma")
    )
    out["noise"] = {
        policy: {str(s): r for s, r in zip(rows["sigma"], rows["return"], strict=True)}
        for (policy,), rows in robustness.group_by("policy", maintain_order=True)
    }
    return out


def run(ctx: StepContext) -> None:
    params: GBRLParams = ctx.params
    runs, curves, noise = (read_parquet(ctx.input(role)) for role in ("runs", "curves", "noise"))
    binned = binned_curves(curves, params.grid.steps)
    figures = ctx.output("figures")
    figures.mkdir(parents=True, exist_ok=True)
    returns_figure(binned, random_levels(runs), figures / "returns.png")
    noise_figure(noise, figures / "noise.png")
    write_plot_data(binned, ctx.output("plot_data"))
    write_metrics(scores(runs, noise), ctx.output("metrics"))
