"""Step `sharpening-report`: the sweep table, trajectory figures (sharpness and 2/η vs step per sweep value)
and the final-S-vs-Ŝ_D scatter with Pearson r."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet
from stages.core.metrics import new_figure, save_figure, write_metrics, write_plot_data

SETTING = ["sweep", "group", "n", "depth", "batch_size", "rule", "rule_value"]


def with_kind(runs: pl.DataFrame) -> pl.DataFrame:
    """`kind` (real / synthetic) and `group` (the subset name without its seed) from the subset name."""
    return runs.with_columns(
        pl.col("subset").str.split("-").list.first().alias("kind"),
        pl.col("subset").str.replace(r"-s\d+$", "").alias("group"),
    )


def sweep_table(runs: pl.DataFrame) -> pl.DataFrame:
    """Per setting, means over seeds: Q, init scale α and the D = 2 small-init rise R₀, initial and final S,
    bounds, Ŝ_D, 2/η, and how many runs converged."""
    return (
        with_kind(runs)
        .group_by(SETTING)
        .agg(
            pl.len().alias("seeds"),
            (pl.col("status") == "converged").sum().alias("converged"),
            pl.col("difficulty").mean().alias("Q"),
            pl.col("init_scale").mean().alias("alpha"),
            pl.col("small_init_rise").mean().alias("small_init_rise"),
            pl.col("initial_sharpness").mean().alias("initial_S"),
            pl.col("final_sharpness").mean().alias("final_S"),
            pl.col("final_sharpness").std().alias("final_S_std"),
            pl.col("lower").mean(),
            pl.col("upper").mean(),
            pl.col("predicted").mean().alias("S_hat"),
            pl.col("threshold").mean().alias("two_over_eta"),
            pl.col("steps").mean().alias("mean_steps"),
        )
        .sort(SETTING, nulls_last=True)
    )


def pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    """Pearson r (None for fewer than 3 points or a constant series)."""
    if len(x) < 3 or np.std(x) == 0 or np.std(y) == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def scatter_points(runs: pl.DataFrame, practical: pl.DataFrame) -> pl.DataFrame:
    """Final S vs Ŝ_D: converged minimalist GD runs below the edge of stability, and the practical GD grid."""
    minimalist = runs.filter(
        pl.col("gd")
        & (pl.col("rule") == "ratio")
        & (pl.col("rule_value") < 1)
        & (pl.col("status") == "converged")
    )
    frames = [
        minimalist.select(pl.lit("minimalist").alias("family"), "run_id", "predicted", "final_sharpness"),
        practical.filter(~pl.col("sgd")).select(
            pl.col("architecture").alias("family"), "run_id", "predicted", "final_sharpness"
        ),
    ]
    return pl.concat(frames).sort("family", "run_id")


def correlations(points: pl.DataFrame) -> dict[str, float | None]:
    """Pearson r of final S vs Ŝ_D per family."""
    return {
        family: pearson(frame["predicted"].to_numpy(), frame["final_sharpness"].to_numpy())
        for (family,), frame in sorted(points.group_by(["family"]), key=lambda item: item[0])
    }


def trajectory_figure(runs: pl.DataFrame, trajectories: pl.DataFrame, sweep: str, path) -> None:
    """Sharpness vs step of seed-0 runs of one sweep (one line per setting) with 2/η dashed."""
    chosen = (
        with_kind(runs)
        .filter((pl.col("sweep") == sweep) & (pl.col("seed") == runs["seed"].min()))
        .sort(SETTING, nulls_last=True)
    )
    figure, axis = new_figure(7, 4.5)
    colours = iter(__import__("matplotlib").colormaps["viridis"](np.linspace(0, 0.9, max(chosen.height, 1))))
    for row in chosen.iter_rows(named=True):
        colour = next(colours)
        points = trajectories.filter(pl.col("run_id") == row["run_id"]).sort("step")
        label = f"N={row['n']} D={row['depth']} B={row['batch_size']} {row['rule']}={row['rule_value']:g}"
        if row["kind"] == "synthetic":
            label = f"Q={row['difficulty']:.3g} D={row['depth']} {row['rule']}={row['rule_value']:g}"
        axis.plot(points["step"], points["sharpness"], color=colour, label=label, lw=1.2)
        axis.axhline(row["threshold"], color=colour, ls="--", lw=0.8)
    axis.set_xscale("symlog", linthresh=1000)
    axis.set_yscale("log")
    axis.set_xlabel("step")
    axis.set_ylabel("sharpness S (dashed: 2/η)")
    axis.set_title(f"minimalist model, sweep {sweep} (seed {runs['seed'].min()})")
    axis.legend(fontsize=6, ncol=2)
    save_figure(figure, path)


def practical_figure(practical: pl.DataFrame, trajectories: pl.DataFrame, path) -> None:
    """Sharpness vs step of the practical networks (first seed), one panel per architecture."""
    architectures = sorted(practical["architecture"].unique())
    figure, axes = new_figure(5 * len(architectures), 4, ncols=len(architectures))
    axes = np.atleast_1d(axes)
    for axis, arch in zip(axes, architectures, strict=True):
        rows = practical.filter(
            (pl.col("architecture") == arch) & (pl.col("seed") == practical["seed"].min())
        ).sort("n", "depth", "sgd")
        for row in rows.iter_rows(named=True):
            points = trajectories.filter(pl.col("run_id") == row["run_id"]).sort("step")
            style = ":" if row["sgd"] else "-"
            line = axis.plot(
                points["step"],
                points["sharpness"],
                style,
                label=f"N={row['n']} D={row['depth']} B={row['batch_size']}",
            )
            axis.axhline(row["predicted"], color=line[0].get_color(), ls="--", lw=0.6)
        axis.set_yscale("log")
        axis.set_xlabel("step")
        axis.set_ylabel("sharpness (dashed: Ŝ_D)")
        axis.set_title(f"{arch} MLP")
        axis.legend(fontsize=5, ncol=2)
    save_figure(figure, path)


def scatter_figure(points: pl.DataFrame, r: dict[str, float | None], path) -> None:
    """Measured final S against Ŝ_D, log-log, one colour per family, r in the legend."""
    figure, axis = new_figure(5.5, 5)
    for (family,), frame in sorted(points.group_by(["family"]), key=lambda item: item[0]):
        value = r.get(family)
        axis.scatter(
            frame["predicted"],
            frame["final_sharpness"],
            s=12,
            label=f"{family} (r = {value:.3f})" if value is not None else family,
        )
    limits = [float(points["predicted"].min()) * 0.8, float(points["predicted"].max()) * 1.2]
    axis.plot(limits, limits, "k:", lw=0.8)
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlabel("predicted Ŝ_D = σ₁²Q^{(D−1)/D}/N")
    axis.set_ylabel("measured final sharpness")
    axis.legend(fontsize=7)
    save_figure(figure, path)


def run(ctx: StepContext) -> None:
    """Write the sweep table, figures, scatter data and metrics."""
    runs, trajectories = read_parquet(ctx.input("runs")), read_parquet(ctx.input("trajectories"))
    practical = read_parquet(ctx.input("practical_runs"))
    practical_trajectories = read_parquet(ctx.input("practical_trajectories"))
    table = sweep_table(runs)
    write_plot_data(table, ctx.output("sweep_table"))
    points = scatter_points(runs, practical)
    r = correlations(points)
    write_plot_data(points, ctx.output("scatter"))
    figures = ctx.output("figures")
    figures.mkdir(parents=True, exist_ok=True)
    for sweep in sorted(runs["sweep"].unique()):
        trajectory_figure(runs, trajectories, sweep, figures / f"trajectories_{sweep}.png")
    practical_figure(practical, practical_trajectories, figures / "trajectories_practical.png")
    scatter_figure(points, r, figures / "final_vs_predicted.png")
    write_metrics(
        {
            "pearson_r_final_vs_predicted": r,
            "minimalist_runs": runs.height,
            "minimalist_converged": int((runs["status"] == "converged").sum()),
            "minimalist_diverged": int((runs["status"] == "diverged").sum()),
            "practical_runs": practical.height,
            "practical_converged": int((practical["status"] == "converged").sum()),
        },
        ctx.output("metrics"),
    )
    ctx.log(f"sweep table {table.height} settings; r = {r}")
