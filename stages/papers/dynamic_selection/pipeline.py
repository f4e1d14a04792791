"""The dynamic-selection pipeline: its artefacts and steps (the source `dvc.yaml` is generated from)."""

from __future__ import annotations

from stages.core.steps import Catalog, Pipeline, Plot, Step
from stages.datasets.pool import pool_step_deps
from stages.papers.paper import Paper

DATA = Catalog(
    "data/dynamic_selection",
    pool="pool.parquet",
    test="test.parquet",
    labels="labels.parquet",
    validation="validation.json",
    consistency="consistency.parquet",
    class_texts="class_texts.parquet",
    consistency_timings="timings/consistency.json",
    consistency_report="consistency_report.json",
    runs="runs.parquet",
    epochs="epochs.parquet",
    train_timings="timings/train.json",
    summary="summary.parquet",
    metrics="metrics.json",
    plot_data="plots/accuracy_vs_ratio.csv",
    figure="figures/accuracy_vs_ratio.png",
    selection_figure="figures/selection.png",
    claims="claims.json",
    headline="headline.json",
    time_summary="timings/summary.parquet",
    time_metrics="timings/metrics.json",
    time_plot_data="timings/plots/accuracy_vs_time.csv",
    time_figure="timings/figures/accuracy_vs_time.png",
    overhead_figure="timings/figures/overhead.png",
    timing_claims="timings/claims.json",
)
POOL = ("pool", "test", "labels")

STEPS = (
    Step(
        name="prepare",
        deps=pool_step_deps("dynamic_selection"),
        outs=DATA.pick(*POOL, "validation"),
        params=(
            "common.seed",
            "dynamic_selection.dataset",
            "dynamic_selection.pool_size",
            "dynamic_selection.test_size",
            "dynamic_selection.noise_rates",
        ),
        description="draw the pool, keep the test split untouched, inject label noise into the pool per rate",
    ),
    Step(
        name="consistency",
        deps=DATA.pick(*POOL),
        outs=DATA.pick("consistency", "class_texts", timings="consistency_timings"),
        metrics=DATA.pick(report="consistency_report"),
        params=(
            "common.seed",
            "dynamic_selection.dataset",
            "dynamic_selection.class_descriptions",
            "dynamic_selection.projection",
        ),
        description="semantic consistency: class texts (all-MiniLM-L6-v2) vs an image→text projection "
        "cross-fitted on the pool's noisy labels (a CLIP stand-in; no clean labels)",
    ),
    Step(
        name="train",
        deps=DATA.pick(*POOL, "consistency"),
        outs=DATA.pick("runs", "epochs", timings="train_timings"),
        params=(
            "common.seed",
            "dynamic_selection.seeds",
            "dynamic_selection.noise_rates",
            "dynamic_selection.ratios",
            "dynamic_selection.methods",
            "dynamic_selection.augmentation",
            "dynamic_selection.train",
        ),
        description="every noise rate × seed × method × ratio: train with the per-epoch dynamic sampler",
    ),
    Step(
        name="evaluate",
        deps=DATA.pick("runs"),
        outs=DATA.pick("summary"),
        metrics=DATA.pick("metrics"),
        plots={
            "plot_data": Plot(
                DATA["plot_data"],
                x="ratio",
                y="accuracy_mean",
                title="Dynamic selection: test accuracy vs kept ratio",
            ),
            "figure": Plot(DATA["figure"]),
            "selection_figure": Plot(DATA["selection_figure"]),
        },
        params=("dynamic_selection.claims.full", "dynamic_selection.claims.noise_rate"),
        description="accuracy paired with full data, noise handling; figures",
    ),
    Step(
        name="timing",
        deps=DATA.pick("summary", "train_timings", "consistency_timings"),
        outs=DATA.pick("time_summary", claims="timing_claims"),
        metrics=DATA.pick("time_metrics"),
        plots={
            "plot_data": Plot(
                DATA["time_plot_data"],
                x="time_saving_mean",
                y="accuracy_mean",
                title="Dynamic selection: test accuracy vs time saving",
            ),
            "figure": Plot(DATA["time_figure"]),
            "overhead_figure": Plot(DATA["overhead_figure"]),
        },
        params=("dynamic_selection.methods", "dynamic_selection.claims"),
        description="benchmark step (timings/ only, read by no data output): training-time saving vs full data "
        "from robust per-run costs, and the time claim",
    ),
    Step(
        name="claims",
        deps=DATA.pick("summary"),
        outs=DATA.pick("claims"),
        headline=DATA.pick("headline"),
        params=("dynamic_selection.claims",),
        description="check the paper's accuracy, synergy and noise claims",
    ),
)

PAPER = Paper(
    id="dynamic_selection",
    title="When dynamic data selection meets data augmentation: per-epoch selection by density × consistency",
    pipeline=Pipeline.of_paper("dynamic_selection", "DynamicSelectionParams", STEPS),
    benchmarks="stages.papers.dynamic_selection.benchmarks:run_selection_benchmarks",
)
