"""The three figures of the search step: ID vs OOD NMSE per searcher (Fig. 5), symbolic accuracy by
complexity bin for original vs transformed problems (Fig. 4), symbolic accuracy vs OOD Acc_τ (Fig. 6)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from stages.core.metrics import new_figure, save_figure
from stages.papers.llm_srbench.params import LLMSRBenchParams

FEYNMAN = ("original", "transformed")


def complexity_bins(runs: pl.DataFrame, bins: int) -> pl.DataFrame:
    """Each Feynman problem (original or transformed) with its complexity bin: equal-count edges of the
    ground truths' node counts, pooled over both families (bin 0 the simplest)."""
    problems = (
        runs.filter(pl.col("family").is_in(FEYNMAN))
        .select("problem", "family", "source", "complexity")
        .unique()
        .sort("problem")
    )
    if problems.is_empty():
        return problems.with_columns(pl.lit(0).alias("bin"))
    edges = np.quantile(problems["complexity"].to_numpy(), np.linspace(0, 1, bins + 1)[1:-1])
    labels = np.searchsorted(edges, problems["complexity"].to_numpy(), side="right")
    return problems.with_columns(pl.Series("bin", labels.astype(np.int64)))


def log_nmse(values: pl.Series | np.ndarray, floor: float, ceiling: float) -> np.ndarray:
    """log10 of NMSE clipped to [floor, ceiling] (exact fits give 0; no usable prediction gives inf)."""
    return np.log10(np.clip(np.asarray(values, dtype=np.float64), floor, ceiling))


def searchers_of(runs: pl.DataFrame, params: LLMSRBenchParams) -> list[str]:
    """The searchers compared in the figures and claims (the oracle is a check, not a searcher)."""
    return [
        label
        for label in params.searchers
        if label != params.claims.oracle and label in set(runs["searcher"])
    ]


def nmse_figure(runs: pl.DataFrame, params: LLMSRBenchParams, path: Path) -> None:
    labels = searchers_of(runs, params)
    figure, axis = new_figure(1.6 + 1.6 * len(labels), 3.8)
    claims = params.claims
    for index, label in enumerate(labels):
        rows = runs.filter((pl.col("searcher") == label) & pl.col("nmse_ood").is_not_null()).sort("problem")
        ids = log_nmse(rows["nmse_id"], claims.log_floor, claims.log_ceiling)
        oods = log_nmse(rows["nmse_ood"], claims.log_floor, claims.log_ceiling)
        for a, b in zip(ids, oods, strict=True):
            axis.plot([index - 0.15, index + 0.15], [a, b], color="0.7", lw=0.8)
        axis.scatter(
            np.full(len(ids), index - 0.15), ids, color="C0", s=12, label="ID" if index == 0 else None
        )
        axis.scatter(
            np.full(len(oods), index + 0.15), oods, color="C3", s=12, label="OOD" if index == 0 else None
        )
        if len(ids):
            axis.hlines([np.median(ids)], index - 0.3, index, colors="C0")
            axis.hlines([np.median(oods)], index, index + 0.3, colors="C3")
    axis.set_xticks(range(len(labels)), labels)
    axis.set_ylabel("log10 NMSE (synthetic problems; bars: medians)")
    axis.set_title("ID vs OOD NMSE per searcher (paired by problem)", fontsize=9)
    axis.legend(fontsize=7)
    save_figure(figure, path)


def complexity_figure(runs: pl.DataFrame, params: LLMSRBenchParams, path: Path) -> None:
    labels = searchers_of(runs, params)
    bins = complexity_bins(runs, params.claims.complexity_bins)
    joined = runs.join(bins.select("problem", "bin"), on="problem")
    figure, axes = new_figure(3.4 * len(labels), 3.4, ncols=len(labels))
    axes = np.atleast_1d(axes)
    for axis, label in zip(axes, labels, strict=True):
        share = (
            joined.filter(pl.col("searcher") == label)
            .group_by("family", "bin")
            .agg(
                pl.col("sa").cast(pl.Float64).mean().alias("sa"),
                pl.col("acc_id").cast(pl.Float64).mean().alias("acc"),
                pl.len().alias("n"),
            )
        )
        for offset, family in ((-0.2, "original"), (0.2, "transformed")):
            rows = share.filter(pl.col("family") == family).sort("bin")
            axis.bar(
                rows["bin"].to_numpy() + offset,
                rows["acc"],
                width=0.4,
                alpha=0.35,
                color="C0" if family == "original" else "C1",
            )
            axis.bar(
                rows["bin"].to_numpy() + offset,
                rows["sa"],
                width=0.4,
                label=f"{family} SA (light: Acc0.1)",
                color="C0" if family == "original" else "C1",
            )
        axis.set_title(label, fontsize=9)
        axis.set_xlabel("complexity bin (node count, equal-count)")
        axis.set_ylim(0, 1)
    axes[0].set_ylabel("share of problems")
    axes[0].legend(fontsize=7)
    save_figure(figure, path)


def sa_figure(runs: pl.DataFrame, params: LLMSRBenchParams, path: Path) -> None:
    labels = searchers_of(runs, params)
    synth = runs.filter(pl.col("nmse_ood").is_not_null() & pl.col("searcher").is_in(labels))
    cells = (
        synth.group_by("searcher", "family")
        .agg(
            pl.col("acc_ood").cast(pl.Float64).mean().alias("acc_ood"),
            pl.col("nmse_ood").median().alias("nmse_ood"),
            pl.col("sa").cast(pl.Float64).mean().alias("sa"),
        )
        .sort("searcher", "family")
    )
    figure, axes = new_figure(9.0, 3.6, ncols=2)
    for index, label in enumerate(labels):
        rows = cells.filter(pl.col("searcher") == label)
        axes[0].scatter(rows["acc_ood"], rows["sa"], color=f"C{index}", label=label)
        axes[1].scatter(
            log_nmse(rows["nmse_ood"], params.claims.log_floor, params.claims.log_ceiling),
            rows["sa"],
            color=f"C{index}",
            label=label,
        )
    axes[0].set_xlabel("OOD Acc0.1 (share of problems)")
    axes[1].set_xlabel("log10 median OOD NMSE")
    for axis in axes:
        axis.set_ylabel("symbolic accuracy (share)")
    axes[0].set_title("searcher × synthetic domain", fontsize=9)
    axes[0].legend(fontsize=7)
    save_figure(figure, path)


def write_figures(runs: pl.DataFrame, params: LLMSRBenchParams, folder: Path) -> None:
    """Write the three PNGs into `folder`."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    nmse_figure(runs, params, folder / "nmse_id_vs_ood.png")
    complexity_figure(runs, params, folder / "sa_by_complexity.png")
    sa_figure(runs, params, folder / "sa_vs_ood.png")
