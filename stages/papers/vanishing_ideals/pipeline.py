"""The VI-Net pipeline: its artefacts and steps (the source `dvc.yaml` is generated from)."""

from __future__ import annotations

from stages.core.steps import Catalog, Pipeline, Plot, Step
from stages.datasets.pool import pool_step_deps
from stages.papers.paper import Paper

DATA = Catalog(
    "data/vanishing_ideals",
    datasets="datasets.safetensors",
    base="base.safetensors",
    prepared="prepared.json",
    results="results.parquet",
    psi_grid="psi_grid.parquet",
    predictions="predictions.safetensors",
    generators="generators.parquet",
    vanishing="vanishing.safetensors",
    models="models.safetensors",
    metrics="metrics.json",
    plot_data="plots/accuracy_vs_removed.csv",
    figures="figures",
    claims="claims.json",
    headline="headline.json",
    throughput="timings/throughput.json",
    throughput_figure="timings/throughput_vs_cut.png",
    timing_claims="timings/claims.json",
)
SCALE = ("vanishing_ideals.scale", "vanishing_ideals.default", "vanishing_ideals.full")

STEPS = (
    Step(
        name="prepare",
        deps=pool_step_deps("vanishing_ideals"),
        outs=DATA.pick("datasets", "base", "prepared"),
        params=("common.seed", "vanishing_ideals.dataset", *SCALE),
        description="stratified train/validation subsets of the train split and a test subset; the CIFAR-style "
        "ResNet (default: 3 stages × 2 blocks, 16/32/64; full: ResNet-18's 4 × 2, 64…512) trained on the train subset",
    ),
    Step(
        name="fit",
        deps=DATA.pick("datasets", "base"),
        outs=DATA.pick("results", "psi_grid", "predictions", "generators", "vanishing", "models"),
        params=("common.seed", *SCALE),
        description="per cut: pooled latents → PCA → tanh → generators per class (ψ on validation) → pruned "
        "polynomial layer + head; linear probe and random monomials with the same head recipe",
    ),
    Step(
        name="timing",
        deps=DATA.pick("datasets", "base", "models"),
        outs=DATA.pick("throughput", figure="throughput_figure", claims="timing_claims"),
        params=("common.seed", *SCALE, "vanishing_ideals.claims"),
        description="benchmark step (timings/ only): img/s of the full net and VI-Net at every cut, batch 256, "
        "median of interleaved repeats; the throughput claims",
    ),
    Step(
        name="figures",
        deps=DATA.pick("results", "generators", "vanishing", "prepared"),
        outs=DATA.pick("figures"),
        metrics=DATA.pick("metrics"),
        plots={
            "plot_data": Plot(
                DATA["plot_data"],
                x="removed_pct",
                y="test_accuracy",
                title="VI-Net: accuracy vs conv layers removed",
            ),
        },
        params=SCALE,
        description="accuracy vs % conv layers removed (VI-Net, linear probe, random monomials, full net), "
        "parameters vs cut, generator values on own vs other classes",
    ),
    Step(
        name="claims",
        deps=DATA.pick("results", "predictions", "generators", "prepared"),
        outs=DATA.pick("claims"),
        headline=DATA.pick("headline"),
        params=(*SCALE, "vanishing_ideals.claims"),
        description="the card's claims: near-full accuracy at ≤ 50 % parameters, accuracy rises with depth, "
        "VI-Net above both baselines at every cut, the vanishing premise (throughput: vanishing_ideals-timing)",
    ),
)

PAPER = Paper(
    id="vanishing_ideals",
    title="VI-Net: approximating latent manifolds in neural networks via vanishing ideals",
    pipeline=Pipeline.of_paper("vanishing_ideals", "VanishingIdealsParams", STEPS),
    benchmarks="stages.papers.vanishing_ideals.benchmarks:run_benchmarks",
    commands=("stages.methods.ideals.commands",),
)
