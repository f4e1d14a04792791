"""The Info-Coevolution pipeline: its artefacts and steps (the source `dvc.yaml` is generated from)."""

from __future__ import annotations

from stages.core.steps import Catalog, Pipeline, Plot, Step
from stages.datasets.pool import pool_step_deps
from stages.papers.paper import Paper

DATA = Catalog(
    "data/info_coevolution",
    calibration="calibration.parquet",
    pool="pool.parquet",
    test="test.parquet",
    validation="validation.json",
    reference="reference.json",
    curves="curves.parquet",
    annotations="annotations.parquet",
    annotate_timings="timings/annotate.json",
    summary="summary.parquet",
    metrics="metrics.json",
    plot_data="plots/accuracy_vs_annotations.csv",
    figure="figures/accuracy_vs_annotations.png",
    claims="claims.json",
    headline="headline.json",
)
SCHEDULE_KEYS = (
    "info_coevolution.scale",
    "info_coevolution.seeds",
    "info_coevolution.train",
    "info_coevolution.min_steps",
)

STEPS = (
    Step(
        name="prepare",
        deps=pool_step_deps("info_coevolution"),
        outs=DATA.pick("calibration", "pool", "test", "validation"),
        params=(
            "common.seed",
            "info_coevolution.scale",
            "info_coevolution.calibration_size",
            "info_coevolution.dataset",
            "info_coevolution.pool_size",
            "info_coevolution.test_size",
            "info_coevolution.seed_fraction",
            "info_coevolution.budget",
        ),
        description=(
            "draw the calibration split and the annotation pool (labels hidden as the oracle); keep the test "
            "split untouched"
        ),
    ),
    Step(
        name="reference",
        deps=DATA.pick("pool", "test"),
        outs=DATA.pick("reference"),
        params=("common.seed", *SCHEDULE_KEYS, "info_coevolution.reference_seeds"),
        description="full-label accuracy over at least three seeds: the target the strategies must reach",
    ),
    Step(
        name="annotate",
        deps=DATA.pick("calibration", "pool", "test"),
        outs=DATA.pick("curves", "annotations", timings="annotate_timings"),
        params=(
            "common.seed",
            *SCHEDULE_KEYS,
            "info_coevolution.seed_fraction",
            "info_coevolution.round_fraction",
            "info_coevolution.batch_size",
            "info_coevolution.budget",
            "info_coevolution.strategies",
            "info_coevolution.fixmatch",
        ),
        description=(
            "every run kind (strategy × supervised / FixMatch) × seed: rounds of train → calibrate → embed → "
            "select → annotate from the oracle"
        ),
    ),
    Step(
        name="evaluate",
        deps=DATA.pick("curves", "reference", "pool", "test"),
        outs=DATA.pick("summary"),
        metrics=DATA.pick("metrics"),
        plots={
            "plot_data": Plot(
                DATA["plot_data"],
                x="n_annotated",
                y="accuracy_mean",
                title="Info-Coevolution: test accuracy vs annotations",
            ),
            "figure": Plot(DATA["figure"]),
        },
        params=("info_coevolution.claims", "info_coevolution.strategies"),
        description=(
            "annotations to reach full-label accuracy for good, stop points; tolerance vs test standard error, "
            "majority class; figures"
        ),
    ),
    Step(
        name="claims",
        deps=DATA.pick("summary", "reference"),
        outs=DATA.pick("claims"),
        headline=DATA.pick("headline"),
        params=("info_coevolution.claims", "info_coevolution.budget", "info_coevolution.strategies"),
        description="check the paper's three claims",
    ),
)

PAPER = Paper(
    id="info_coevolution",
    title="Info-Coevolution: online selective annotation that lets model and data co-evolve",
    pipeline=Pipeline.of_paper("info_coevolution", "InfoCoevolutionParams", STEPS),
    benchmarks="stages.papers.info_coevolution.benchmarks:run_annotation_benchmarks",
)
