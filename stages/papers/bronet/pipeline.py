"""The BRONet pipeline: its artefacts and steps (the source `dvc.yaml` is generated from)."""

from __future__ import annotations

from stages.core.steps import Catalog, Pipeline, Plot, Step
from stages.papers.paper import Paper

DATA = Catalog(
    "data/bronet",
    datasets="datasets.safetensors",
    prepared="prepared.json",
    layers="layers.json",
    mnist="mnist.parquet",
    runs="runs.parquet",
    items="items.parquet",
    model="models/bro_la",
    train_timings="timings/train.json",
    metrics="metrics.json",
    plot_data="plots/certified_accuracy.csv",
    figures="figures",
    claims="claims.json",
    headline="headline.json",
    timing_repeats="timings/repeats.json",
    timing_claims="timings/claims.json",
    timing_figure="timings/figures/time_per_layer.png",
)
SCALE = ("bronet.scale", "bronet.default", "bronet.full")
THREADS = "bronet.threads"

STEPS = (
    Step(
        name="prepare",
        deps={
            "fashion_mnist": "data/raw/fashion_mnist/table.parquet",
            "mnist5k": "data/raw/mnist5k/table.parquet",
        },
        outs=DATA.pick("datasets", "prepared"),
        params=(*SCALE, "common.seed"),
        description="Fashion-MNIST train/test subsets (stratified) padded to 32 × 32 in [0, 1]; MNIST-5k 28 × 28",
    ),
    Step(
        name="layers",
        deps={},
        outs=DATA.pick("layers"),
        params=("common.seed", THREADS, "bronet.layers"),
        description="BRO dense/conv orthogonality and −1 eigenvalues, norm ratios, Cayley/SOC errors, whole-net "
        "power-iteration Lipschitz, activation memory per layer type",
    ),
    Step(
        name="mnist",
        deps=DATA.pick("datasets"),
        outs=DATA.pick("mnist"),
        params=("common.seed", THREADS, "bronet.mnist"),
        description="one BRO dense layer 784 → 10 on MNIST-5k (Adam, CE): per test item correct and radius",
    ),
    Step(
        name="train",
        deps=DATA.pick("datasets"),
        outs=DATA.pick("runs", "items", "model", train_timings="train_timings"),
        params=(*SCALE, THREADS, "common.seed", "bronet.loss", "bronet.claims"),
        description="LipConvNet conv ∈ {BRO, Cayley, SOC} × loss ∈ {LA, CE + CR} × seeds and the BRO rank sweep: "
        "clean/certified accuracy, ACR, per-item radii, a PGD check of the certificates",
    ),
    Step(
        name="figures",
        deps=DATA.pick("runs", "items", "layers"),
        outs=DATA.pick("figures"),
        metrics=DATA.pick("metrics"),
        plots={"plot_data": Plot(DATA["plot_data"], x="epsilon", y="certified_accuracy", title="BRONet")},
        params=SCALE,
        description="certified accuracy vs ε per conv × loss, radius distributions LA vs CE + CR, memory per layer",
    ),
    Step(
        name="timing",
        deps={},
        outs=DATA.pick(repeats="timing_repeats", claims="timing_claims", figure="timing_figure"),
        params=("common.seed", THREADS, "bronet.timing", "bronet.claims"),
        description="benchmark step (timings/ only): forward + backward seconds of BRO, Cayley and SOC convs at "
        "equal widths in interleaved repeats; the speed claim",
    ),
    Step(
        name="claims",
        deps=DATA.pick("layers", "mnist", "runs", "items"),
        outs=DATA.pick("claims"),
        headline=DATA.pick("headline"),
        params=(*SCALE, THREADS, "bronet.claims", "bronet.layers"),
        description="the card's claims: orthogonality and Lipschitz, sound certificates, LA vs CE + CR, BRO vs "
        "Cayley/SOC accuracy and memory, radius distribution, rank, MNIST single layer (speed: bronet-timing)",
    ),
)

PAPER = Paper(
    id="bronet",
    title="BRONet: block reflector orthogonal layers and logit annealing for certified l2 robustness",
    pipeline=Pipeline.of_paper("bronet", "BRONetParams", STEPS),
    benchmarks="stages.papers.bronet.benchmarks:run_benchmarks",
    commands=("stages.methods.lipschitz.commands",),
)
