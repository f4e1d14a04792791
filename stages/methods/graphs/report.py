"""The Markdown dataset-quality report of a RINGS audit."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from stages.methods.graphs.config import AuditConfig
from stages.methods.graphs.verdicts import CATEGORIES


def _table(header: list[str], rows: list[list[Any]]) -> str:
    def cell(value: Any) -> str:
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, float):
            return f"{value:.4g}"
        return "" if value is None else str(value)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
    return "\n".join(lines)


def _scores_section(runs: pl.DataFrame, modes: list[str], metric: str) -> str:
    summary = runs.group_by("dataset", "model", "mode").agg(
        pl.col(metric).mean().alias("mean"), pl.col(metric).std().alias("std")
    )
    lines = []
    for dataset in runs["dataset"].unique(maintain_order=True).to_list():
        rows = []
        for mode in modes:
            row = [mode]
            for model in ("gnn", "baseline"):
                found = summary.filter(
                    (pl.col("dataset") == dataset) & (pl.col("model") == model) & (pl.col("mode") == mode)
                )
                row.append(f"{found['mean'][0]:.3f} ± {found['std'][0]:.3f}" if found.height else "")
            rows.append(row)
        lines += [f"**{dataset}**", "", _table(["mode", f"GNN {metric}", f"baseline {metric}"], rows), ""]
    return "\n".join(lines)


def _encoding(mapping: Mapping[str, int]) -> str:
    """'raw → internal' pairs of a dataset's labels, or 'as given' when they were used unchanged."""
    return ", ".join(f"{raw} → {label}" for raw, label in mapping.items()) if mapping else "as given (0..K−1)"


def _how_run(rows: pl.DataFrame) -> str:
    """'exact (N arrangements)' or 'Monte-Carlo, B permutations, p = (1 + k) / (1 + B)' for one test's rows."""
    exact = rows.filter(pl.col("exact"))
    parts = []
    if exact.height:
        counts = sorted(set(exact["resamples"].to_list()))
        parts.append(f"exact, all {' or '.join(f'{count:,}' for count in counts)} arrangements enumerated")
    if exact.height < rows.height:
        draws = rows.filter(~pl.col("exact"))["resamples"].max()
        parts.append(f"Monte-Carlo, B = {draws:,} permutations, p = (1 + k) / (1 + B)")
    return " / ".join(parts) or "no tests"


def _separability_section(separability: pl.DataFrame) -> str:
    own = separability.filter(pl.col("model") == "gnn")
    wide = own.pivot(
        on="test",
        index=["dataset", "mode_a", "mode_b", "mean_a", "mean_b"],
        values=["p_adjusted", "significant"],
    )
    rows = [
        [row["dataset"], f"{row['mode_a']} vs {row['mode_b']}", f"{row['mean_a']:.3f} / {row['mean_b']:.3f}",
         row["p_adjusted_ks"], row["p_adjusted_wilcoxon"], row["significant_ks"] and row["significant_wilcoxon"]]
        for row in wide.iter_rows(named=True)
    ]  # fmt: skip
    return _table(["dataset", "pair", "mean scores", "KS p (adj.)", "Wilcoxon p (adj.)", "separable"], rows)


def quality_report(
    summaries: Mapping[str, dict[str, Any]],
    runs: pl.DataFrame,
    separability: pl.DataFrame,
    complementarity: pl.DataFrame,
    verdicts: pl.DataFrame,
    config: AuditConfig,
    figures: Mapping[str, str],
) -> str:
    """The report: datasets, verdict ranking and recommendations, scores, tests, complementarity, figures."""
    tests = separability.filter(pl.col("model") == "gnn")
    floor = tests.group_by("test").agg(pl.col("smallest_possible_p_adjusted").min())
    floors = ", ".join(
        f"{row['test']} {row['smallest_possible_p_adjusted']:.2g}"
        for row in floor.sort("test").iter_rows(named=True)
    )
    how = "; ".join(
        f"{test}: {_how_run(tests.filter(pl.col('test') == test))}" for test in ("ks", "wilcoxon")
    )
    parts = [
        "# Graph dataset quality report (RINGS mode perturbations)",
        "",
        f"Model: {config.gnn.kind.upper()} ({config.gnn.layers} layers, width {config.gnn.hidden}) and a "
        "structure-blind baseline (MLP on mean-pooled node features); "
        f"{len(config.seeds)} seeds per mode; score: test {config.metric}. "
        f"Separable = both permutation tests ({how}) reject at α = {config.separability.alpha} after Bonferroni "
        f"over the pairs tested. Smallest adjusted p these tests can return (no p-value below it): {floors}.",
        "",
        "## Datasets",
        "",
        _table(
            ["dataset", "graphs", "mean nodes", "mean edges", "feature dim", "labels", "label encoding"],
            [
                [
                    name,
                    s["graphs"],
                    s["mean_nodes"],
                    s["mean_edges"],
                    s["feature_dim"],
                    s["label_counts"],
                    _encoding(s.get("label_mapping", {})),
                ]
                for name, s in summaries.items()
            ],
        ),
        "",
        "## Ranking and recommendations",
        "",
        _table(
            [
                "rank",
                "dataset",
                "needs structure",
                "needs features",
                f"GNN {config.metric}",
                f"baseline {config.metric}",
                "original beats",
            ],
            [
                [
                    row["rank"],
                    row["dataset"],
                    row["needs_structure"],
                    row["needs_features"],
                    row["gnn_original"],
                    row["baseline_original"],
                    f"{row['beaten_perturbations']}/{row['tested_perturbations']}",
                ]
                for row in verdicts.iter_rows(named=True)
            ],
        ),
        "",
    ]
    for row in verdicts.iter_rows(named=True):
        advice = f"- **{row['dataset']}**: {CATEGORIES[row['category']]}."
        if row["beaten"]:
            advice += f" The original beats: {row['beaten']}."
        if row["perturbations_scoring_higher"]:
            higher = row["perturbations_scoring_higher"]
            advice += f" Scoring *higher* than the original: {higher} — that mode hurts as given."
        parts.append(advice)
    comp = complementarity.pivot(on="mode", index=["dataset", "metric"], values="mean")
    parts += [
        "",
        "## Scores per mode (mean ± std over seeds)",
        "",
        _scores_section(runs, config.modes, config.metric),
        "## Performance separability (GNN)",
        "",
        _separability_section(separability),
        "",
        "## Mode complementarity (mean over graphs, per graph metric D_G)",
        "",
        f"Primary D_G (graph_metric.metric): {config.graph_metric.metric.replace('_', ' ')}. geometric_features are an "
        "MDS of hop distances (close to 0 against hops by construction), spectral_features Laplacian eigenmaps.",
        "",
        _table(["dataset", "D_G", *comp.columns[2:]], [list(row) for row in comp.iter_rows()]),
        "",
        "## Figures",
        "",
        *[f"![{name}]({path})" for name, path in figures.items()],
        "",
    ]
    return "\n".join(parts)
