"""The RINGS pipeline: its artefacts and steps (the source `dvc.yaml` is generated from)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stages.core.steps import Catalog, Pipeline, Plot, Step
from stages.papers.paper import Paper

DATA = Catalog(
    "data/rings",
    datasets="datasets",
    summary="datasets.json",
    runs="runs.parquet",
    train_timings="timings/train.json",
    separability="separability.parquet",
    separability_metrics="separability.json",
    scores_figure="figures/scores.png",
    p_values_figure="figures/p_values.png",
    complementarity="complementarity.parquet",
    complementarity_timings="timings/complementarity.json",
    complementarity_figure="figures/complementarity.png",
    verdicts="verdicts.parquet",
    report="report.md",
    verdicts_metrics="verdicts.json",
    claims="claims.json",
    headline="headline.json",
)
AUDIT = "rings.audit"


def graph_sources(raw_params: Mapping[str, Any]) -> dict[str, str]:
    """The graph folders of the `data-<name>` stages that `rings.datasets` lists."""
    names = (raw_params.get("rings") or {}).get("datasets") or []
    return {f"source_{name}": f"data/raw/{name}/graphs" for name in names} | {
        f"summary_{name}": f"data/raw/{name}/summary.json" for name in names
    }


STEPS = (
    Step(
        name="prepare",
        deps={},
        dynamic_deps=graph_sources,
        outs=DATA.pick("datasets"),
        metrics=DATA.pick("summary"),
        params=("rings.datasets",),
        description="gather the audited datasets (shared data-* graph stages) and their provenance",
    ),
    Step(
        name="train",
        deps=DATA.pick("datasets", "summary"),
        outs=DATA.pick("runs", timings="train_timings"),
        params=(
            f"{AUDIT}.modes",
            f"{AUDIT}.seeds",
            f"{AUDIT}.test_fraction",
            f"{AUDIT}.gnn",
            f"{AUDIT}.baseline",
            f"{AUDIT}.geometric_dim",
            f"{AUDIT}.random_graph_semantics",
        ),
        description="every dataset × mode × seed: a GNN and a structure-blind baseline, test scores",
    ),
    Step(
        name="separability",
        deps=DATA.pick("runs"),
        outs=DATA.pick("separability"),
        metrics=DATA.pick(metrics="separability_metrics"),
        plots={
            "scores_figure": Plot(DATA["scores_figure"]),
            "p_values_figure": Plot(DATA["p_values_figure"]),
        },
        params=("common.seed", f"{AUDIT}.modes", f"{AUDIT}.metric", f"{AUDIT}.separability"),
        description="KS and Wilcoxon permutation tests between modes (Bonferroni), score and p-value figures",
    ),
    Step(
        name="complementarity",
        deps=DATA.pick("datasets", "summary"),
        outs=DATA.pick("complementarity", timings="complementarity_timings"),
        plots={"figure": Plot(DATA["complementarity_figure"])},
        params=(
            "common.seed",
            f"{AUDIT}.complementarity_modes",
            f"{AUDIT}.geometric_dim",
            f"{AUDIT}.random_graph_semantics",
            f"{AUDIT}.graph_metric",
            f"{AUDIT}.extra_graph_metrics",
        ),
        description="feature vs graph geometry (hops, official heat and diffusion) under original, random and "
        "geometry-derived features",
    ),
    Step(
        name="report",
        deps=DATA.pick("summary", "runs", "separability", "complementarity"),
        outs=DATA.pick("verdicts", "report"),
        metrics=DATA.pick(metrics="verdicts_metrics"),
        params=(AUDIT,),
        description="which mode each dataset needs, ranking as benchmarks, Markdown dataset-quality report",
    ),
    Step(
        name="claims",
        deps=DATA.pick("separability", "complementarity", "verdicts"),
        outs=DATA.pick("claims"),
        headline=DATA.pick("headline"),
        params=("rings.claims",),
        description="check the paper's three claims",
    ),
)

PAPER = Paper(
    id="rings",
    title="RINGS: auditing graph-learning datasets by perturbing their structure and feature modes",
    pipeline=Pipeline.of_paper("rings", "RingsParams", STEPS),
    benchmarks="stages.papers.rings.benchmarks:run_graph_benchmarks",
    commands=("stages.methods.graphs.commands",),
)
