"""The dynamic-selection pipeline's steps: their deps, outs and params keys, as `dvc.yaml` declares them."""

from __future__ import annotations

from stages.core.steps import Pipeline, Step
from stages.papers.dynamic_selection import claims, consistency, evaluate, prepare, train
from stages.papers.dynamic_selection.params import DynamicSelectionParams

ROOT = "data/dynamic_selection"
CODE = "stages/papers/dynamic_selection"
METHODS = "stages/methods/selection/dynamic"
DATA_DEPS = {
    "pool": f"{ROOT}/pool.parquet",
    "test": f"{ROOT}/test.parquet",
    "labels": f"{ROOT}/labels.parquet",
}

STEPS = (
    Step(
        name="prepare",
        run=prepare.run,
        deps={"table": "data/raw/${dynamic_selection.dataset}/table.parquet"},
        outs={**DATA_DEPS, "validation": f"{ROOT}/validation.json"},
        params=(
            "common.seed",
            "dynamic_selection.dataset",
            "dynamic_selection.pool_size",
            "dynamic_selection.test_size",
            "dynamic_selection.noise_rates",
        ),
        code=(
            f"{CODE}/prepare.py",
            f"{CODE}/params.py",
            "stages/datasets/splits.py",
            "stages/datasets/noise.py",
        ),
        description="draw the training pool, keep the test split untouched, inject label noise per rate",
    ),
    Step(
        name="consistency",
        run=consistency.run,
        deps=DATA_DEPS,
        outs={
            "consistency": f"{ROOT}/consistency.parquet",
            "class_texts": f"{ROOT}/class_texts.parquet",
            "timings": f"{ROOT}/timings/consistency.json",
        },
        metrics={"report": f"{ROOT}/consistency_report.json"},
        params=(
            "common.seed",
            "dynamic_selection.dataset",
            "dynamic_selection.class_descriptions",
            "dynamic_selection.projection",
        ),
        code=(
            f"{CODE}/consistency.py",
            f"{CODE}/data.py",
            f"{METHODS}/consistency.py",
            "stages/datasets/text.py",
        ),
        description="semantic consistency: class texts (all-MiniLM-L6-v2) vs a contrastive image→text projection",
    ),
    Step(
        name="train",
        run=train.run,
        deps={**DATA_DEPS, "consistency": f"{ROOT}/consistency.parquet"},
        outs={
            "runs": f"{ROOT}/runs.parquet",
            "epochs": f"{ROOT}/epochs.parquet",
            "timings": f"{ROOT}/timings/train.json",
        },
        params=(
            "common.seed",
            "dynamic_selection.seeds",
            "dynamic_selection.noise_rates",
            "dynamic_selection.ratios",
            "dynamic_selection.methods",
            "dynamic_selection.augmentation",
            "dynamic_selection.train",
        ),
        code=(f"{CODE}/train.py", f"{CODE}/data.py", METHODS, "stages/models"),
        description="every noise rate × seed × method × ratio: train with the per-epoch dynamic sampler",
    ),
    Step(
        name="evaluate",
        run=evaluate.run,
        deps={"runs": f"{ROOT}/runs.parquet", "timings": f"{ROOT}/timings/train.json"},
        outs={"summary": f"{ROOT}/summary.parquet"},
        metrics={"metrics": f"{ROOT}/metrics.json"},
        plots={
            "plot_data": f"{ROOT}/plots/accuracy_vs_time.csv",
            "figure": f"{ROOT}/figures/accuracy_vs_time.png",
            "selection_figure": f"{ROOT}/figures/selection.png",
        },
        params=("dynamic_selection.claims.full", "dynamic_selection.claims.noise_rate"),
        code=(f"{CODE}/evaluate.py",),
        description="accuracy and training time paired with full data, noise handling; figures",
    ),
    Step(
        name="claims",
        run=claims.run,
        deps={"summary": f"{ROOT}/summary.parquet"},
        outs={"claims": f"{ROOT}/claims.json"},
        params=("dynamic_selection.claims",),
        code=(f"{CODE}/claims.py",),
        description="check the paper's three claims",
    ),
)

PIPELINE = Pipeline(
    id="dynamic_selection",
    params_section="dynamic_selection",
    params_model=DynamicSelectionParams,
    steps=STEPS,
)
