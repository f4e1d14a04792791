"""The sharpening pipeline: its artefacts and steps (the source `dvc.yaml` is generated from)."""

from __future__ import annotations

from stages.core.steps import Catalog, Pipeline, Plot, Step
from stages.papers.paper import Paper

DATA = Catalog(
    "data/sharpening",
    subsets="subsets.parquet",
    spectra="spectra.parquet",
    runs="runs.parquet",
    trajectories="trajectories.parquet",
    practical_runs="practical_runs.parquet",
    practical_trajectories="practical_trajectories.parquet",
    sweep_table="sweep_table.csv",
    metrics="metrics.json",
    scatter="plots/final_vs_predicted.csv",
    figures="figures",
    claims="claims.json",
    headline="headline.json",
)

SCALE = ("sharpening.scale", "sharpening.full")

STEPS = (
    Step(
        name="prepare",
        deps={
            "table": "data/raw/${sharpening.dataset}/table.parquet",
            "table_validation": "data/raw/${sharpening.dataset}/validation.json",
        },
        outs=DATA.pick("subsets", "spectra"),
        params=(
            *SCALE,
            "sharpening.dataset",
            "sharpening.classes",
            "sharpening.seeds",
            "sharpening.synthetic",
            "sharpening.sweeps",
            "sharpening.practical",
        ),
        description="draw 2-class subsets and synthetic data with a set spectrum; Q, Ŝ_D and bounds per depth",
    ),
    Step(
        name="train_minimalist",
        deps=DATA.pick("subsets"),
        outs=DATA.pick("runs", "trajectories"),
        params=(*SCALE, "sharpening.seeds", "sharpening.minimalist", "sharpening.sweeps"),
        description="GD/SGD on the minimalist model for every sweep, exact Hessian sharpness every k steps",
    ),
    Step(
        name="train_practical",
        deps=DATA.pick("subsets"),
        outs=DATA.pick(runs="practical_runs", trajectories="practical_trajectories"),
        params=(*SCALE, "sharpening.practical"),
        description="deep linear and tanh MLPs on the same subsets, Lanczos sharpness every k steps",
    ),
    Step(
        name="report",
        deps=DATA.pick("runs", "trajectories", "practical_runs", "practical_trajectories"),
        outs=DATA.pick("sweep_table", "figures"),
        metrics=DATA.pick("metrics"),
        plots={
            "scatter": Plot(
                DATA["scatter"], x="predicted", y="final_sharpness", title="final sharpness vs predicted Ŝ_D"
            )
        },
        description="sweep table, sharpness and 2/η vs step per sweep value, final S vs Ŝ_D scatter with r",
    ),
    Step(
        name="claims",
        deps=DATA.pick("runs", "trajectories", "practical_runs"),
        outs=DATA.pick("claims"),
        headline=DATA.pick("headline"),
        params=(
            *SCALE,
            "sharpening.seeds",
            "sharpening.minimalist",
            "sharpening.sweeps",
            "sharpening.practical",
            "sharpening.claims",
        ),
        description="check the card's claims: PS + EoS, dataset difficulty, depth, stochasticity, practical nets",
    ),
)

PAPER = Paper(
    id="sharpening",
    title="Sharpness dynamics in a minimalist model: dataset difficulty, depth, stochasticity, step size",
    pipeline=Pipeline.of_paper("sharpening", "SharpeningParams", STEPS),
    benchmarks="stages.papers.sharpening.benchmarks:run_benchmarks",
)
