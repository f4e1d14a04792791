"""The MRMC pipeline: its artefacts and steps (the source `dvc.yaml` is generated from)."""

from __future__ import annotations

from stages.core.steps import Catalog, Pipeline, Plot, Step
from stages.datasets.pool import pool_step_deps
from stages.papers.paper import Paper

DATA = Catalog(
    "data/mrmc",
    pool="pool.parquet",
    test="test.parquet",
    validation="validation.json",
    trace="trace.parquet",
    selections="selections.parquet",
    class_counts="class_counts.parquet",
    class_phi="plots/class_phi.csv",
    class_figure="figures/class_counts.png",
    models="models",
    results="results.parquet",
    metrics="metrics.json",
    plot_data="plots/accuracy_vs_budget.csv",
    figure="figures/accuracy_vs_budget.png",
    claims="claims.json",
    headline="headline.json",
    trace_timings="timings/trace.json",
    select_timings="timings/select.json",
    train_timings="timings/train.json",
    cost_timings="timings/cost.json",
    timing_claims="timings/claims.json",
)

STEPS = (
    Step(
        name="prepare",
        deps=pool_step_deps("mrmc"),
        outs=DATA.pick("pool", "test", "validation"),
        params=("common.seed", "mrmc.scale", "mrmc.dataset", "mrmc.pool_size", "mrmc.test_size"),
        description="draw the selection pool from the train split; keep the test split untouched",
    ),
    Step(
        name="trace",
        deps=DATA.pick("pool"),
        outs=DATA.pick("trace", timings="trace_timings"),
        params=("common.seed", "mrmc.scale", "mrmc.seeds", "mrmc.trace"),
        description="train R epochs on the pool per seed, logging each sample's loss by an eval pass per epoch",
    ),
    Step(
        name="select",
        deps=DATA.pick("pool", "trace"),
        outs=DATA.pick("selections", "class_counts", timings="select_timings"),
        plots={
            "class_phi": Plot(DATA["class_phi"], x="label", y="mean_phi", title="MRMC: mean φ per class"),
            "figure": Plot(DATA["class_figure"]),
        },
        params=(
            "common.seed",
            "mrmc.scale",
            "mrmc.seeds",
            "mrmc.budgets",
            "mrmc.balance",
            "mrmc.methods",
            "mrmc.feature_space",
            "mrmc.claims.mrmc_method",
            "mrmc.claims.random_method",
            "mrmc.claims.pure_method",
        ),
        description="every method × budget × seed selects its core-set; picks per class and their figure",
    ),
    Step(
        name="train",
        deps=DATA.pick("pool", "selections"),
        outs=DATA.pick("models", timings="train_timings"),
        params=("common.seed", "mrmc.scale", "mrmc.train"),
        description="train a fresh model on each core-set and on the full pool",
    ),
    Step(
        name="cost",
        deps=DATA.pick("pool", "trace", "selections"),
        outs=DATA.pick(timings="cost_timings"),
        params=(
            "common.seed",
            "mrmc.scale",
            "mrmc.seeds",
            "mrmc.balance",
            "mrmc.methods",
            "mrmc.feature_space",
            "mrmc.trace",
            "mrmc.train",
            "mrmc.cost",
            "mrmc.claims",
        ),
        description="selection cost: interleaved repeats of trace/training epochs and scoring calls in one run",
    ),
    Step(
        name="evaluate",
        deps=DATA.pick("test", "models"),
        outs=DATA.pick("results"),
        metrics=DATA.pick("metrics"),
        plots={
            "plot_data": Plot(
                DATA["plot_data"], x="budget", y="mean_accuracy", title="MRMC: test accuracy vs budget"
            ),
            "figure": Plot(DATA["figure"]),
        },
        description="test accuracy of every model on the untouched test split; figures",
    ),
    Step(
        name="timing",
        deps=DATA.pick("cost_timings"),
        outs=DATA.pick(claims="timing_claims"),
        params=("mrmc.scale", "mrmc.methods", "mrmc.claims"),
        description="benchmark step (timings/ only, read by no data output): judge the selection-cost claim "
        "on the medians of mrmc-cost's interleaved repeats",
    ),
    Step(
        name="claims",
        deps=DATA.pick("results", "selections", "pool"),
        outs=DATA.pick("claims"),
        headline=DATA.pick("headline"),
        params=("mrmc.scale", "mrmc.budgets", "mrmc.methods", "mrmc.claims"),
        description="check the paper's claims and the ablations",
    ),
)

PAPER = Paper(
    id="mrmc",
    title="MRMC: core-set selection by Maximum Reduction as Maximum Contribution",
    pipeline=Pipeline.of_paper("mrmc", "MRMCParams", STEPS),
    commands=("stages.methods.selection.commands",),
)
