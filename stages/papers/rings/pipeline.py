"""The RINGS pipeline's steps: their deps, outs and params keys, as `dvc.yaml` declares them."""

from __future__ import annotations

from stages.core.steps import Pipeline, Step
from stages.papers.rings import claims, complementarity, prepare, report, separability, train
from stages.papers.rings.params import RingsParams

ROOT = "data/rings"
CODE = "stages/papers/rings"
METHODS = "stages/methods/graphs"
DATASETS = {"datasets": f"{ROOT}/datasets", "summary": f"{ROOT}/datasets.json"}
AUDIT = "rings.audit"

STEPS = (
    Step(
        name="prepare",
        run=prepare.run,
        deps={},
        outs={"datasets": DATASETS["datasets"]},
        metrics={"summary": DATASETS["summary"]},
        params=("common.seed", "rings.datasets"),
        code=(f"{CODE}/prepare.py", f"{CODE}/params.py", "stages/datasets/graphs"),
        description="B3DB molecules (RDKit), structure- and feature-only controls (networkx) as graph tables",
    ),
    Step(
        name="train",
        run=train.run,
        deps=DATASETS,
        outs={"runs": f"{ROOT}/runs.parquet", "timings": f"{ROOT}/timings/train.json"},
        params=(
            f"{AUDIT}.modes",
            f"{AUDIT}.seeds",
            f"{AUDIT}.test_fraction",
            f"{AUDIT}.gnn",
            f"{AUDIT}.baseline",
            f"{AUDIT}.geometric_dim",
        ),
        code=(
            f"{CODE}/train.py",
            f"{METHODS}/audit.py",
            f"{METHODS}/perturbations.py",
            f"{METHODS}/geometry.py",
            "stages/models",
        ),
        description="every dataset × mode × seed: a GNN and a structure-blind baseline, test scores",
    ),
    Step(
        name="separability",
        run=separability.run,
        deps={"runs": f"{ROOT}/runs.parquet"},
        outs={"separability": f"{ROOT}/separability.parquet"},
        metrics={"metrics": f"{ROOT}/separability.json"},
        plots={
            "scores_figure": f"{ROOT}/figures/scores.png",
            "p_values_figure": f"{ROOT}/figures/p_values.png",
        },
        params=("common.seed", f"{AUDIT}.modes", f"{AUDIT}.metric", f"{AUDIT}.separability"),
        code=(f"{CODE}/separability.py", f"{METHODS}/separability.py", f"{METHODS}/figures.py"),
        description="KS and Wilcoxon permutation tests between modes (Bonferroni), score and p-value figures",
    ),
    Step(
        name="complementarity",
        run=complementarity.run,
        deps=DATASETS,
        outs={
            "complementarity": f"{ROOT}/complementarity.parquet",
            "timings": f"{ROOT}/timings/complementarity.json",
        },
        plots={"figure": f"{ROOT}/figures/complementarity.png"},
        params=(
            "common.seed",
            f"{AUDIT}.complementarity_modes",
            f"{AUDIT}.geometric_dim",
            f"{AUDIT}.graph_metric",
        ),
        code=(
            f"{CODE}/complementarity.py",
            f"{METHODS}/complementarity.py",
            f"{METHODS}/geometry.py",
            f"{METHODS}/perturbations.py",
        ),
        description="feature vs hop-distance geometry per dataset under original, random and geometric features",
    ),
    Step(
        name="report",
        run=report.run,
        deps={
            "summary": DATASETS["summary"],
            "runs": f"{ROOT}/runs.parquet",
            "separability": f"{ROOT}/separability.parquet",
            "complementarity": f"{ROOT}/complementarity.parquet",
        },
        outs={"verdicts": f"{ROOT}/verdicts.parquet", "report": f"{ROOT}/report.md"},
        metrics={"metrics": f"{ROOT}/verdicts.json"},
        params=(AUDIT,),
        code=(f"{CODE}/report.py", f"{METHODS}/verdicts.py", f"{METHODS}/report.py"),
        description="which mode each dataset needs, ranking as benchmarks, Markdown dataset-quality report",
    ),
    Step(
        name="claims",
        run=claims.run,
        deps={
            "separability": f"{ROOT}/separability.parquet",
            "complementarity": f"{ROOT}/complementarity.parquet",
            "verdicts": f"{ROOT}/verdicts.parquet",
        },
        outs={"claims": f"{ROOT}/claims.json"},
        params=("rings.claims",),
        code=(f"{CODE}/claims.py",),
        description="check the paper's three claims",
    ),
)

PIPELINE = Pipeline(id="rings", params_section="rings", params_model=RingsParams, steps=STEPS)
