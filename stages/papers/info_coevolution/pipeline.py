"""The Info-Coevolution pipeline's steps: their deps, outs and params keys, as `dvc.yaml` declares them."""

from __future__ import annotations

from stages.core.steps import Pipeline, Step
from stages.papers.info_coevolution import annotate, claims, evaluate, prepare, reference
from stages.papers.info_coevolution.params import InfoCoevolutionParams

ROOT = "data/info_coevolution"
CODE = "stages/papers/info_coevolution"
SCHEDULE_KEYS = (
    "info_coevolution.seeds",
    "info_coevolution.train",
    "info_coevolution.min_steps",
)

STEPS = (
    Step(
        name="prepare",
        run=prepare.run,
        deps={"table": "data/raw/${info_coevolution.dataset}/table.parquet"},
        outs={
            "pool": f"{ROOT}/pool.parquet",
            "test": f"{ROOT}/test.parquet",
            "validation": f"{ROOT}/validation.json",
        },
        params=(
            "common.seed",
            "info_coevolution.dataset",
            "info_coevolution.pool_size",
            "info_coevolution.test_size",
            "info_coevolution.seed_fraction",
            "info_coevolution.budget",
        ),
        code=(f"{CODE}/prepare.py", f"{CODE}/params.py", "stages/datasets/splits.py"),
        description="draw the annotation pool (labels hidden as the oracle) and keep the test split untouched",
    ),
    Step(
        name="reference",
        run=reference.run,
        deps={"pool": f"{ROOT}/pool.parquet", "test": f"{ROOT}/test.parquet"},
        outs={"reference": f"{ROOT}/reference.json"},
        params=("common.seed", *SCHEDULE_KEYS),
        code=(
            f"{CODE}/reference.py",
            f"{CODE}/data.py",
            "stages/methods/selection/online/loop.py",
            "stages/models",
        ),
        description="full-label accuracy per seed: the target the strategies must reach",
    ),
    Step(
        name="annotate",
        run=annotate.run,
        deps={"pool": f"{ROOT}/pool.parquet", "test": f"{ROOT}/test.parquet"},
        outs={
            "curves": f"{ROOT}/curves.parquet",
            "annotations": f"{ROOT}/annotations.parquet",
            "timings": f"{ROOT}/timings/annotate.json",
        },
        params=(
            "common.seed",
            *SCHEDULE_KEYS,
            "info_coevolution.seed_fraction",
            "info_coevolution.round_fraction",
            "info_coevolution.batch_size",
            "info_coevolution.budget",
            "info_coevolution.strategies",
        ),
        code=(f"{CODE}/annotate.py", f"{CODE}/data.py", "stages/methods/selection/online", "stages/models"),
        description="every strategy × seed: rounds of train → embed → select → annotate from the oracle",
    ),
    Step(
        name="evaluate",
        run=evaluate.run,
        deps={
            "curves": f"{ROOT}/curves.parquet",
            "reference": f"{ROOT}/reference.json",
            "pool": f"{ROOT}/pool.parquet",
        },
        outs={"summary": f"{ROOT}/summary.parquet"},
        metrics={"metrics": f"{ROOT}/metrics.json"},
        plots={
            "plot_data": f"{ROOT}/plots/accuracy_vs_annotations.csv",
            "figure": f"{ROOT}/figures/accuracy_vs_annotations.png",
        },
        params=("info_coevolution.claims.tolerance",),
        code=(f"{CODE}/evaluate.py",),
        description="annotations to reach full-label accuracy, stop points; figures",
    ),
    Step(
        name="claims",
        run=claims.run,
        deps={"summary": f"{ROOT}/summary.parquet"},
        outs={"claims": f"{ROOT}/claims.json"},
        params=("info_coevolution.claims", "info_coevolution.budget"),
        code=(f"{CODE}/claims.py",),
        description="check the paper's three claims",
    ),
)

PIPELINE = Pipeline(
    id="info_coevolution", params_section="info_coevolution", params_model=InfoCoevolutionParams, steps=STEPS
)
