"""The SFBD pipeline: its artefacts and steps (the source `dvc.yaml` is generated from)."""

from __future__ import annotations

from stages.core.steps import Catalog, Pipeline, Plot, Step
from stages.papers.paper import Paper

DATA = Catalog(
    "data/sfbd",
    datasets="datasets.safetensors",
    cnn="eval_cnn.safetensors",
    prepared="prepared.json",
    runs="runs.parquet",
    denoised="denoised.parquet",
    kept="kept.safetensors",
    run_summary="run_summary.json",
    metrics="metrics.json",
    plot_data="plots/distance_by_round.csv",
    figures="figures",
    claims="claims.json",
    headline="headline.json",
)
SCALE = ("sfbd.scale", "sfbd.default", "sfbd.full")

STEPS = (
    Step(
        name="prepare",
        deps={},
        outs=DATA.pick("datasets", "cnn", "prepared"),
        params=(*SCALE, "sfbd.test_fraction", "sfbd.split_seed", "common.seed"),
        description="images in [−1, 1] split 80/20, per seed the clean/noisy order and the noise ε (drawn once), "
        "the MNIST-8×8 similar set, the evaluation CNN (clean train only)",
    ),
    Step(
        name="run",
        deps=DATA.pick("datasets", "cnn"),
        outs=DATA.pick("runs", "denoised", "kept", "run_summary"),
        params=(*SCALE, "common.seed", "sfbd.gmm", "sfbd.samples_kept", "sfbd.claims"),
        description="clean-only, noisy-only, SFBD from each, similar-data + SFBD, oracle per seed × clean "
        "fraction, scored every round (FD pixels/features, KID; E_k against the originals); the 2-D mixture",
    ),
    Step(
        name="figures",
        deps=DATA.pick("runs", "denoised", "kept", "prepared"),
        outs=DATA.pick("figures"),
        metrics=DATA.pick("metrics"),
        plots={
            "plot_data": Plot(DATA["plot_data"], x="k", y="fd_feature", title="SFBD: distance by round"),
        },
        params=(*SCALE, "sfbd.claims"),
        description="distance per round per method, sample grids per method, E_k beside the clean originals",
    ),
    Step(
        name="claims",
        deps=DATA.pick("runs", "denoised", "prepared"),
        outs=DATA.pick("claims"),
        headline=DATA.pick("headline"),
        params=(*SCALE, "sfbd.claims", "sfbd.gmm"),
        description="the card's claims: 10 % beats 4 %, rounds improve on the start, SFBD beats noisy-only, "
        "similar-data start, oracle bound, the mixture sanity track",
    ),
)

PAPER = Paper(
    id="sfbd",
    title="SFBD: diffusion models from noisy images and a little clean data (stochastic forward–backward "
    "deconvolution)",
    pipeline=Pipeline.of_paper("sfbd", "SFBDParams", STEPS),
    benchmarks="stages.papers.sfbd.benchmarks:run_benchmarks",
    commands=("stages.methods.diffusion.commands",),
)
