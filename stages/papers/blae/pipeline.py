"""The BLAE pipeline: its artefacts and steps (the source `dvc.yaml` is generated from).

One `simulate` stage runs every cell: the step specs (and so `dvc.yaml`) are static while the cells are a params
list, and the generator has no DVC matrix/foreach (docs/design-notes.md).
"""

from __future__ import annotations

from stages.core.steps import Catalog, Pipeline, Plot, Step
from stages.papers.paper import Paper

DATA = Catalog(
    "data/blae",
    runs="runs.parquet",
    curves="curves.parquet",
    batches="batches.parquet",
    timings="timings/simulate.json",
    horizons="horizons.parquet",
    metrics="metrics.json",
    plot_data="plots/final_regret.csv",
    regret_figure="figures/regret_curves.png",
    batches_figure="figures/batches_vs_horizon.png",
    claims="claims.json",
    headline="headline.json",
    timing_repeats="timings/repeats.json",
    timing_claims="timings/claims.json",
)
GRID = ("blae.scale", "blae.default", "blae.full", "blae.noise_sd", "blae.algorithms", "blae.curve_points")

STEPS = (
    Step(
        name="simulate",
        deps={},
        outs=DATA.pick("runs", "curves", "batches", "timings"),
        params=("common.seed", *GRID),
        description="every cell × seed × algorithm on one shared instance per (cell, seed): regret, batches",
    ),
    Step(
        name="horizons",
        deps={},
        outs=DATA.pick("horizons"),
        params=("common.seed", "blae.noise_sd", "blae.algorithms", "blae.horizons"),
        description="batch counts of the batched algorithms at several horizons T (one cell)",
    ),
    Step(
        name="evaluate",
        deps=DATA.pick("runs", "curves", "horizons"),
        outs={},
        metrics=DATA.pick("metrics"),
        plots={
            "plot_data": Plot(
                DATA["plot_data"], x="algorithm", y="mean_regret", title="BLAE: final regret per cell"
            ),
            "regret_figure": Plot(DATA["regret_figure"]),
            "batches_figure": Plot(DATA["batches_figure"]),
        },
        description="per-cell regret and batch summaries; regret curves and batches-vs-T figures",
    ),
    Step(
        name="timing",
        deps={},
        outs=DATA.pick(repeats="timing_repeats", claims="timing_claims"),
        params=("common.seed", *GRID, "blae.claims"),
        description="benchmark step (timings/ only, read by no data output): time every compared run in "
        "interleaved repeats and judge the overhead claim on their medians",
    ),
    Step(
        name="claims",
        deps=DATA.pick("runs", "horizons"),
        outs=DATA.pick("claims"),
        headline=DATA.pick("headline"),
        params=("blae.scale", "blae.default", "blae.full", "blae.algorithms", "blae.horizons", "blae.claims"),
        description="check the card's batch-bound and regret claims (the overhead claim: blae-timing)",
    ),
)

PAPER = Paper(
    id="blae",
    title="BLAE: batched linear bandits with arm elimination and regularized G-optimal design",
    pipeline=Pipeline.of_paper("blae", "BLAEParams", STEPS),
    benchmarks="stages.papers.blae.benchmarks:run_blae_benchmarks",
    commands=("stages.methods.bandits.commands",),
)
