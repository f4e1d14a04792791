"""The MRMC pipeline's steps: their deps, outs and params keys, as `dvc.yaml` declares them."""

from __future__ import annotations

from stages.core.steps import Pipeline, Step
from stages.papers.mrmc import claims, evaluate, prepare, select, trace, train
from stages.papers.mrmc.params import MRMCParams

ROOT = "data/mrmc"
CODE = "stages/papers/mrmc"

STEPS = (
    Step(
        name="prepare",
        run=prepare.run,
        deps={"table": "data/raw/${mrmc.dataset}/table.parquet"},
        outs={
            "pool": f"{ROOT}/pool.parquet",
            "test": f"{ROOT}/test.parquet",
            "validation": f"{ROOT}/validation.json",
        },
        params=("common.seed", "mrmc.dataset", "mrmc.pool_size", "mrmc.test_size"),
        code=(f"{CODE}/prepare.py", "stages/datasets/splits.py"),
        description="draw the selection pool from the train split; keep the test split untouched",
    ),
    Step(
        name="trace",
        run=trace.run,
        deps={"pool": f"{ROOT}/pool.parquet"},
        outs={"trace": f"{ROOT}/trace.parquet", "timings": f"{ROOT}/timings/trace.json"},
        params=("common.seed", "mrmc.seeds", "mrmc.trace"),
        code=(f"{CODE}/trace.py", "stages/methods/selection/tracing.py", "stages/models"),
        description="train R short epochs on the pool per seed, logging each sample's loss",
    ),
    Step(
        name="select",
        run=select.run,
        deps={"pool": f"{ROOT}/pool.parquet", "trace": f"{ROOT}/trace.parquet"},
        outs={"selections": f"{ROOT}/selections.parquet", "timings": f"{ROOT}/timings/select.json"},
        params=("common.seed", "mrmc.seeds", "mrmc.budgets", "mrmc.methods", "mrmc.feature_space"),
        code=(f"{CODE}/select.py", "stages/methods/selection"),
        description="every method × budget × seed selects its core-set",
    ),
    Step(
        name="train",
        run=train.run,
        deps={"pool": f"{ROOT}/pool.parquet", "selections": f"{ROOT}/selections.parquet"},
        outs={"models": f"{ROOT}/models", "timings": f"{ROOT}/timings/train.json"},
        params=("common.seed", "mrmc.train"),
        code=(f"{CODE}/train.py", "stages/models"),
        description="train a fresh model on each core-set and on the full pool",
    ),
    Step(
        name="evaluate",
        run=evaluate.run,
        deps={"test": f"{ROOT}/test.parquet", "models": f"{ROOT}/models"},
        outs={"results": f"{ROOT}/results.parquet"},
        metrics={"metrics": f"{ROOT}/metrics.json"},
        plots={
            "plot_data": f"{ROOT}/plots/accuracy_vs_budget.csv",
            "figure": f"{ROOT}/figures/accuracy_vs_budget.png",
        },
        params=(),
        code=(f"{CODE}/evaluate.py",),
        description="test accuracy of every model on the untouched test split; figures",
    ),
    Step(
        name="claims",
        run=claims.run,
        deps={
            "results": f"{ROOT}/results.parquet",
            "selections": f"{ROOT}/selections.parquet",
            "pool": f"{ROOT}/pool.parquet",
            "trace_timings": f"{ROOT}/timings/trace.json",
            "select_timings": f"{ROOT}/timings/select.json",
            "train_timings": f"{ROOT}/timings/train.json",
        },
        outs={"claims": f"{ROOT}/claims.json"},
        params=("mrmc.budgets", "mrmc.methods", "mrmc.claims"),
        code=(f"{CODE}/claims.py",),
        description="check the paper's three claims",
    ),
)

PIPELINE = Pipeline(id="mrmc", params_section="mrmc", params_model=MRMCParams, steps=STEPS)
