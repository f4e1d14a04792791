"""From separability to a verdict per dataset: which mode the model needs, and a ranking as benchmarks.

A mode is *needed* when the original scores significantly higher than the dataset with that mode emptied
(`empty_graph` for structure, `empty_features` for features; when those are not tested, any perturbation of
that mode). Datasets rank by category (both modes > structure only > features only > neither), then by how
many perturbations the original beats, then by the GNN's gain over the structure-blind baseline.
"""

from __future__ import annotations

import polars as pl

from stages.methods.graphs.modes import MODES
from stages.methods.graphs.separability import separable_pairs

CATEGORIES = {
    "both": "needs structure and features: a graph benchmark in the full sense",
    "structure": "needs structure only: the node features add nothing measurable",
    "features": "needs features only: removing the structure costs nothing measurable; no evidence for graph learning",
    "neither": "neither mode measurably needed: check the labels and the model before benchmarking on it",
}
_PRIORITY = {name: rank for rank, name in enumerate(CATEGORIES)}
_EMPTIED = {"structure": "empty_graph", "features": "empty_features"}


def _needs(pairs: pl.DataFrame, family: str) -> tuple[bool, list[str]]:
    """Whether the original beats the emptied mode (else any tested perturbation of the family)."""
    beaten = pairs.filter(pl.col("separable") & (pl.col("mean_a") > pl.col("mean_b")))["mode_b"].to_list()
    tested = [mode for mode in pairs["mode_b"].to_list() if MODES[mode][0] == family]
    evidence = [_EMPTIED[family]] if _EMPTIED[family] in tested else tested
    return any(mode in beaten for mode in evidence), [mode for mode in tested if mode in beaten]


def dataset_verdicts(separability: pl.DataFrame, runs: pl.DataFrame, metric: str) -> pl.DataFrame:
    """One row per dataset: needed modes, category, perturbations beaten, GNN gain over baseline, rank."""
    pairs = separable_pairs(
        separability.filter((pl.col("model") == "gnn") & (pl.col("mode_a") == "original"))
    )
    original = (
        runs.filter(pl.col("mode") == "original").group_by("dataset", "model").agg(pl.col(metric).mean())
    )
    rows = []
    for dataset in pairs["dataset"].unique(maintain_order=True).to_list():
        own = pairs.filter(pl.col("dataset") == dataset)
        structure, structure_beaten = _needs(own, "structure")
        features, features_beaten = _needs(own, "features")
        category = {(True, True): "both", (True, False): "structure", (False, True): "features"}.get(
            (structure, features), "neither"
        )
        better = own.filter(pl.col("separable") & (pl.col("mean_b") > pl.col("mean_a")))["mode_b"].to_list()
        scores = {
            row["model"]: row[metric]
            for row in original.filter(pl.col("dataset") == dataset).iter_rows(named=True)
        }
        rows.append(
            {
                "dataset": dataset,
                "needs_structure": structure,
                "needs_features": features,
                "category": category,
                "beaten_perturbations": len(structure_beaten) + len(features_beaten),
                "tested_perturbations": own.height,
                "beaten": ", ".join(structure_beaten + features_beaten),
                "perturbations_scoring_higher": ", ".join(better),
                "gnn_original": scores.get("gnn"),
                "baseline_original": scores.get("baseline"),
                "gnn_gain_over_baseline": scores.get("gnn", 0.0) - scores.get("baseline", 0.0),
            }
        )
    verdicts = pl.DataFrame(rows).with_columns(
        pl.col("category").replace_strict(_PRIORITY, return_dtype=pl.Int64).alias("_priority")
    )
    ranked = verdicts.sort(
        ["_priority", "beaten_perturbations", "gnn_gain_over_baseline"], descending=[False, True, True]
    )
    return ranked.drop("_priority").with_row_index("rank", offset=1)
