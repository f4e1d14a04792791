"""Step `kindel-evaluate`: per model × split kind × split, test MSE and held-out −ρ in the four columns
(`scores.parquet`), their mean ± sd over splits (`metrics.json`, the card's table), and the figures: per-column
ranks, predicted vs measured affinity, counts vs enrichment."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_parquet
from stages.core.metrics import new_figure, save_figure, write_metrics, write_plot_data
from stages.methods.del_screens.schema import ENRICHMENT, KD, MATRIX_COUNTS, SPLIT_KINDS, TARGET_COUNTS
from stages.papers.kindel.common import load_screen
from stages.papers.kindel.params import KinDELParams
from stages.papers.kindel.scores import COLUMNS, score_table


def summary(scores: pl.DataFrame) -> dict:
    """{kind: {model: {metric: {mean, sd, splits}}}} over splits."""
    metrics = [c for c in scores.columns if c not in ("model", "kind", "split")]
    out: dict = {}
    for (kind, model), group in scores.group_by("kind", "model", maintain_order=True):
        entry = {}
        for metric in metrics:
            values = group[metric].drop_nans().drop_nulls().to_numpy()
            entry[metric] = {
                "mean": round(float(values.mean()), 4) if len(values) else None,
                "sd": round(float(values.std(ddof=1)), 4) if len(values) > 1 else None,
                "splits": len(values),
            }
        out.setdefault(kind, {})[model] = entry
    return out


def ranks(
    table: dict, models: list[str], other_scale: tuple[str, ...] = ()
) -> dict[str, dict[str, dict[str, int]]]:
    """Per kind and column, each model's rank by mean (1 = best: highest −ρ, lowest test MSE). Test MSE ranks
    only the models predicting `target_enrichment`: those in `other_scale` (DEL-Compose, whose score lives on
    another scale) are left out of that column, not ranked on a number that cannot be compared."""
    out: dict = {}
    for kind, per_model in table.items():
        for column in (*COLUMNS, "test_mse"):
            ranked = [m for m in models if column != "test_mse" or m not in other_scale]
            means = {m: per_model[m][column]["mean"] for m in ranked if m in per_model}
            known = {m: v for m, v in means.items() if v is not None}
            order = sorted(known, key=lambda m: known[m], reverse=column != "test_mse")
            out.setdefault(kind, {})[column] = {m: i + 1 for i, m in enumerate(order)}
    return out


def ranks_figure(rank_table: dict, models: list[str], path) -> None:
    columns = [*COLUMNS, "test_mse"]
    figure, axes = new_figure(5.2 * len(rank_table), 0.5 * len(models) + 2.2, ncols=len(rank_table))
    for axis, kind in zip(np.atleast_1d(axes), rank_table, strict=True):
        grid = np.array([[rank_table[kind][c].get(m, np.nan) for c in columns] for m in models], dtype=float)
        axis.imshow(grid, cmap="viridis_r", vmin=1, vmax=len(models))
        for (i, j), value in np.ndenumerate(grid):
            if not np.isnan(value):
                axis.text(j, i, int(value), ha="center", va="center", color="white", fontsize=8)
        axis.set_xticks(range(len(columns)), [c.replace("_", "\n") for c in columns], fontsize=7)
        axis.set_yticks(range(len(models)), models, fontsize=8)
        axis.set_title(f"{kind} splits: rank per column (1 = best; blank: other scale)")
    save_figure(figure, path)


def affinity_figure(screen, predictions: pl.DataFrame, models: list[str], path) -> None:
    """Prediction (rank percentile) vs measured pKd of the off- and on-DNA compounds, split 1 of the random
    splits; crosses mark compounds outside the library."""
    figure, axes = new_figure(3.0 * len(models), 5.6, ncols=len(models), nrows=2)
    axes = np.atleast_2d(axes).reshape(2, len(models))
    for row, kind in enumerate(("ondna", "offdna")):
        table = screen.heldout[kind]
        pkd = 9 - np.log10(table[KD].to_numpy())
        outside = table["molecule_hash"].is_null().to_numpy()
        for col, model in enumerate(models):
            rows = predictions.filter(
                (pl.col("model") == model)
                & (pl.col("set") == kind)
                & (pl.col("kind") == "random")
                & (pl.col("split") == 1)
            ).sort("row")
            percentile = rows["prediction"].rank().to_numpy() / max(rows.height, 1)
            axis = axes[row, col]
            axis.scatter(pkd[~outside], percentile[~outside], s=10, label="in library")
            axis.scatter(pkd[outside], percentile[outside], s=25, marker="x", label="external")
            axis.set(title=f"{model}, {kind}", xlabel="measured pKd", ylabel="prediction (rank percentile)")
    axes[0, 0].legend(fontsize=7)
    save_figure(figure, path)


def counts_figure(screen, path) -> None:
    """Mean target count vs target_enrichment, coloured by mean matrix count."""
    library = screen.library
    target = library.select(TARGET_COUNTS).to_numpy().mean(axis=1)
    matrix = library.select(MATRIX_COUNTS).to_numpy().mean(axis=1)
    figure, axis = new_figure(5.0, 4.0)
    points = axis.scatter(target, library[ENRICHMENT].to_numpy(), c=matrix, s=6, cmap="magma")
    figure.colorbar(points, ax=axis, label="mean matrix count")
    axis.set(xlabel="mean target count", ylabel="target_enrichment", xscale="symlog", yscale="symlog")
    axis.set_title("counts vs enrichment (Poisson-bound ratio)")
    save_figure(figure, path)


def run(ctx: StepContext) -> None:
    params: KinDELParams = ctx.params
    screen = load_screen(ctx.input("library"), params.target)
    truth = read_parquet(ctx.input("truth"))
    predictions = pl.concat([read_parquet(ctx.input("baselines")), read_parquet(ctx.input("compose"))])
    scores = score_table(screen, truth, predictions)
    write_parquet(scores, ctx.output("scores"))
    table = summary(scores)
    models = params.models
    rank_table = ranks(table, models, tuple(params.compose))
    write_metrics({"table": table, "ranks": rank_table}, ctx.output("metrics"))
    long = scores.unpivot(index=["model", "kind", "split"], on=list(COLUMNS), variable_name="column")
    plot = long.group_by("model", "kind", "column").agg(pl.col("value").mean().alias("neg_spearman"))
    write_plot_data(plot.sort("kind", "column", "model"), ctx.output("plot_data"))
    figures = ctx.output("figures")
    ranks_figure(
        {k: rank_table[k] for k in SPLIT_KINDS if k in rank_table}, models, figures / "column_ranks.png"
    )
    affinity_figure(screen, predictions, models, figures / "predicted_vs_measured.png")
    counts_figure(screen, figures / "counts_vs_enrichment.png")
