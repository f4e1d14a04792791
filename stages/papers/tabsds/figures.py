"""Step `tabsds-figures`: the fidelity / utility / privacy table (metrics.json, a CSV for `dvc plots`) and the
figures: detection vs DCR along the n_c sweep, marginals real vs synthetic (time per method: `tabsds-timing`)."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet
from stages.core.metrics import new_figure, save_figure, write_metrics, write_plot_data
from stages.papers.tabsds.params import TabSDSParams

COLUMNS = (
    "detection_auroc",
    "utility_synthetic",
    "utility_real",
    "mia_auroc",
    "mia_prior_auroc",
    "dcr_median",
    "dcr_reference_median",
    "dcr_reference_official_median",
    "association_error",
    "association_error_pearson",
    "ks_mean",
    "tv_mean",
)


def summary_table(runs: pl.DataFrame) -> pl.DataFrame:
    """Mean of every metric over seeds, per dataset and label."""
    return (
        runs.group_by("dataset", "label", "group", "n_levels")
        .agg(*(pl.col(c).mean() for c in COLUMNS), pl.len().alias("seeds"))
        .sort("dataset", "group", "n_levels", "label", nulls_last=True)
    )


def metrics(summary: pl.DataFrame) -> dict:
    table: dict = {}
    for row in summary.filter(pl.col("group") == "method").iter_rows(named=True):
        values = {c: round(row[c], 4) for c in COLUMNS if row[c] is not None and not np.isnan(row[c])}
        table.setdefault(row["dataset"], {})[row["label"]] = values
    return table


def tradeoff_figure(runs: pl.DataFrame, path) -> None:
    sweep = (
        runs.filter(pl.col("group") == "sweep")
        .group_by("dataset", "n_levels")
        .agg(pl.col("detection_auroc").mean(), pl.col("dcr_median").mean())
    )
    datasets = sorted(sweep["dataset"].unique())
    figure, axes = new_figure(4.2 * len(datasets), 3.4, ncols=len(datasets))
    for axis, dataset in zip(np.atleast_1d(axes), datasets, strict=True):
        rows = sweep.filter(pl.col("dataset") == dataset).sort("n_levels")
        axis.plot(rows["dcr_median"], rows["detection_auroc"], marker="o")
        for row in rows.iter_rows(named=True):
            axis.annotate(str(row["n_levels"]), (row["dcr_median"], row["detection_auroc"]), fontsize=7)
        axis.set(
            title=f"{dataset}: n_c sweep", xlabel="median DCR (train → synthetic)", ylabel="detection AUROC"
        )
    save_figure(figure, path)


def marginals_figure(tables, samples, datasets: list[str], labels: list[str], path) -> None:
    """First numeric column of each dataset: real training rows vs each kept synthesizer (histograms)."""
    figure, axes = new_figure(4.2 * len(datasets), 3.4, ncols=len(datasets))
    for axis, dataset in zip(np.atleast_1d(axes), datasets, strict=True):
        real = read_parquet(tables / dataset / "train.parquet")
        column = next(c for c, t in real.schema.items() if t.is_numeric())
        bins = np.histogram_bin_edges(real[column].to_numpy(), bins=20)
        axis.hist(real[column].to_numpy(), bins=bins, density=True, color="black", alpha=0.3, label="real")
        for label in labels:
            file = samples / dataset / f"{label}.parquet"
            if file.is_file():
                values = read_parquet(file)[column].to_numpy()
                axis.hist(values, bins=bins, density=True, histtype="step", label=label)
        axis.set(title=f"{dataset}: {column}", xlabel=column, ylabel="density")
        axis.legend(fontsize=7)
    save_figure(figure, path)


def run(ctx: StepContext) -> None:
    params: TabSDSParams = ctx.params
    runs = read_parquet(ctx.input("runs"))
    summary = summary_table(runs)
    write_metrics(metrics(summary), ctx.output("metrics"))
    write_plot_data(
        summary.filter(pl.col("group") == "sweep").select(
            "dataset", "n_levels", "detection_auroc", "dcr_median"
        ),
        ctx.output("plot_data"),
    )
    figures = ctx.output("figures")
    tradeoff_figure(runs, figures / "detection_vs_dcr_by_nc.png")
    marginals_figure(
        ctx.input("tables"),
        ctx.input("samples"),
        params.grid.datasets,
        params.samples_kept,
        figures / "marginals.png",
    )
