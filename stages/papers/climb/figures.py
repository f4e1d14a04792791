"""Step `climb-figures`: per-site AUROC single vs multitask, few-shot AUROC vs k, fusion bars, example records per
class (PNG), the three result tables in metrics.json, and the per-site table as DVC plot data."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet
from stages.core.metrics import new_figure, save_figure, write_metrics, write_plot_data
from stages.datasets.ecg.records import LEADS_8, read_record
from stages.datasets.ecg.snomed import CLASSES
from stages.papers.climb.data import load_options
from stages.papers.climb.params import SITES, ClimbParams


def site_table(auroc: pl.DataFrame) -> pl.DataFrame:
    """Per site (own-site models) and regime: mean and sd of macro AUROC over seeds."""
    return (
        auroc.filter(pl.col("own_site"))
        .group_by("site", "regime")
        .agg(
            pl.col("macro_auroc").mean().alias("mean"),
            pl.col("macro_auroc").std().alias("sd"),
            pl.len().alias("seeds"),
        )
        .sort("site", "regime")
    )


def fewshot_table(fewshot: pl.DataFrame) -> pl.DataFrame:
    return (
        fewshot.group_by("k", "init")
        .agg(
            pl.col("macro_auroc").mean().alias("mean"),
            pl.col("macro_auroc").std().alias("sd"),
            pl.len().alias("units"),
        )
        .sort("k", "init")
    )


def fusion_table(fusion: pl.DataFrame) -> pl.DataFrame:
    return (
        fusion.group_by("task", "regime", "init", "head")
        .agg(pl.col("value").mean().alias("mean"), pl.col("value").std().alias("sd"))
        .sort("task", "regime", "init", "head")
    )


def _sites_png(table: pl.DataFrame, path) -> None:
    figure, axis = new_figure(6.5, 3.8)
    sites = [s for s in SITES if s in table["site"].to_list()]
    for offset, regime in ((-0.18, "single"), (0.18, "multitask")):
        rows = {r["site"]: r for r in table.filter(pl.col("regime") == regime).iter_rows(named=True)}
        axis.bar(
            np.arange(len(sites)) + offset,
            [rows[s]["mean"] for s in sites],
            0.36,
            yerr=[rows[s]["sd"] or 0 for s in sites],
            label=regime,
            capsize=3,
        )
    axis.set_xticks(range(len(sites)), sites)
    axis.set_ylabel("macro AUROC (own-site test)")
    axis.axhline(0.5, color="grey", lw=0.8, ls=":")
    axis.set_ylim(0.3, 1.0)
    axis.legend()
    axis.set_title("RQ1: single-task vs multitask per site (mean ± sd over seeds)")
    save_figure(figure, path)


def _fewshot_png(table: pl.DataFrame, path) -> None:
    figure, axis = new_figure(5.5, 3.8)
    for init in ("multitask", "single_site", "scratch"):
        rows = table.filter(pl.col("init") == init).sort("k")
        axis.errorbar(
            rows["k"].to_list(),
            rows["mean"].to_list(),
            yerr=rows["sd"].fill_null(0).to_list(),
            marker="o",
            capsize=3,
            label=init,
        )
    axis.set_xscale("log", base=2)
    axis.set_xlabel("shots per class (k)")
    axis.set_ylabel("OOD macro AUROC")
    axis.legend()
    axis.set_title("RQ2: few-shot transfer to the OOD site")
    save_figure(figure, path)


def _fusion_png(table: pl.DataFrame, path) -> None:
    figure, axes = new_figure(10, 3.8, ncols=2)
    for axis, task, label in ((axes[0], "mortality", "mortality AUROC"), (axes[1], "los", "LOS MAE (days)")):
        rows = table.filter(pl.col("task") == task)
        groups = [(regime, init) for regime in ("full", "few") for init in ("multitask", "weak")]
        heads = list(dict.fromkeys(rows["head"].to_list()))
        for i, head in enumerate(heads):
            values = [
                rows.filter((pl.col("regime") == g[0]) & (pl.col("init") == g[1]) & (pl.col("head") == head))[
                    "mean"
                ][0]
                for g in groups
            ]
            axis.bar(np.arange(len(groups)) + (i - 1) * 0.27, values, 0.27, label=head)
        axis.set_xticks(range(len(groups)), [f"{r}/{i}" for r, i in groups], fontsize=8)
        axis.set_ylabel(label)
        if task == "mortality":
            axis.set_ylim(0.4, 1.0)
        axis.legend(fontsize=8)
    axes[0].set_title("RQ3: fusion heads (mean over seeds)")
    save_figure(figure, path)


def _examples_png(params: ClimbParams, records, index: pl.DataFrame, path) -> None:
    figure, axes = new_figure(9, 10, nrows=len(CLASSES))
    site = index.filter(pl.col("site") == "ptbxl").sort("record")
    options = load_options(params)
    for axis, name in zip(axes, CLASSES, strict=True):
        row = site.filter(pl.col("labels") == name).head(1)
        if row.height == 0:
            axis.set_title(f"{name}: no single-label example", fontsize=8)
            continue
        signal, _ = read_record(records / "ptbxl" / f"{row['record'][0]}.hea", options)
        t = np.arange(signal.shape[1]) / options.fs
        axis.plot(t, signal[LEADS_8.index("II")], lw=0.8)
        axis.set_ylabel("II, mV", fontsize=7)
        axis.set_title(f"{name} ({row['record'][0]})", fontsize=8)
    axes[-1].set_xlabel("seconds")
    save_figure(figure, path)


def run(ctx: StepContext) -> None:
    params: ClimbParams = ctx.params
    sites = site_table(read_parquet(ctx.input("auroc")))
    shots = fewshot_table(read_parquet(ctx.input("fewshot")))
    fusion = fusion_table(read_parquet(ctx.input("fusion")))
    folder = ctx.output("figures")
    folder.mkdir(parents=True, exist_ok=True)
    _sites_png(sites, folder / "site_auroc.png")
    _fewshot_png(shots, folder / "fewshot_auroc.png")
    _fusion_png(fusion, folder / "fusion.png")
    _examples_png(params, ctx.input("records"), read_parquet(ctx.input("index")), folder / "examples.png")

    def rounded(frame: pl.DataFrame, keys: tuple[str, ...]) -> dict:
        return {
            "/".join(str(r[k]) for k in keys): {
                "mean": round(r["mean"], 4),
                "sd": None if r["sd"] is None else round(r["sd"], 4),
            }
            for r in frame.iter_rows(named=True)
        }

    write_metrics(
        {
            "site_auroc": rounded(sites, ("site", "regime")),
            "fewshot_auroc": rounded(shots, ("k", "init")),
            "fusion": rounded(fusion, ("task", "regime", "init", "head")),
        },
        ctx.output("metrics"),
    )
    write_plot_data(
        sites.select("site", "regime", pl.col("mean").alias("macro_auroc")), ctx.output("plot_data")
    )
    ctx.log(f"figures in {folder}")
