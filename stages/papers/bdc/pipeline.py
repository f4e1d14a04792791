"""The BDC pipeline: its artefacts and steps (the source `dvc.yaml` is generated from)."""

from __future__ import annotations

from stages.core.steps import Catalog, Pipeline, Plot, Step
from stages.papers.paper import Paper

DATA = Catalog(
    "data/bdc",
    items="items.parquet",
    world="world.parquet",
    summary="generate.json",
    correctness="correctness.parquet",
    training="training.json",
    table="table.parquet",
    metrics="metrics.json",
    plot_data="plots/fidelity_resistance.csv",
    figures="figures",
    claims="claims.json",
    headline="headline.json",
)
SETUP = ("bdc.scale", "bdc.default", "bdc.full", "bdc.benchmarks", "bdc.strategies")

STEPS = (
    Step(
        name="generate",
        deps={},
        outs=DATA.pick("items", "world", "summary"),
        params=SETUP,
        description="the fact world and the arithmetic set, their 4-option benchmarks, every strategy's rewrite per "
        "seed and the utility questions, as validated tables",
    ),
    Step(
        name="run",
        deps=DATA.pick("items", "world"),
        outs=DATA.pick("correctness", "training"),
        params=SETUP,
        description="per seed: the clean small LM (world text + MC drills), its copies contaminated by the intensive "
        "and mild recipes per benchmark, every model scored on every version (label log-probabilities)",
    ),
    Step(
        name="figures",
        deps=DATA.pick("correctness"),
        outs=DATA.pick("figures", "table"),
        metrics=DATA.pick("metrics"),
        plots={
            "plot_data": Plot(
                DATA["plot_data"], x="fidelity", y="resistance", title="BDC: fidelity vs resistance"
            )
        },
        params=("bdc.benchmarks", "bdc.strategies", "bdc.claims"),
        description="strategy × recipe × benchmark table with paired bootstrap intervals over questions; fidelity vs "
        "resistance and accuracy change vs fidelity figures",
    ),
    Step(
        name="claims",
        deps=DATA.pick("correctness"),
        outs=DATA.pick("claims"),
        headline=DATA.pick("headline"),
        params=("bdc.benchmarks", "bdc.strategies", "bdc.claims"),
        description="the card's claims: accuracy hides flips, contamination works, no preserving strategy beats "
        "vanilla everywhere, altering strategies trade fidelity for resistance",
    ),
)

PAPER = Paper(
    id="bdc",
    title="BDC: do benchmark rewrites resist contamination? Fidelity and resistance with LMs contaminated here",
    pipeline=Pipeline.of_paper("bdc", "BDCParams", STEPS),
    benchmarks="stages.papers.bdc.benchmarks:run_benchmarks",
    commands=("stages.methods.contamination.commands",),
)
