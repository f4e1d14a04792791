"""The CLIMB pipeline: its artefacts and steps (the source `dvc.yaml` is generated from)."""

from __future__ import annotations

from stages.core.steps import Catalog, Pipeline, Plot, Step
from stages.papers.paper import Paper

DATA = Catalog(
    "data/climb",
    records="records",
    index="index.parquet",
    ehr="ehr.parquet",
    summary="prepare.json",
    auroc="auroc.parquet",
    encoders="encoders.safetensors",
    training="training.json",
    fewshot="fewshot.parquet",
    fusion="fusion.parquet",
    fusion_predictions="fusion_predictions.parquet",
    metrics="metrics.json",
    plot_data="plots/site_auroc.csv",
    figures="figures",
    claims="claims.json",
    headline="headline.json",
)
SETUP = ("climb.data", "climb.seeds", "climb.workers")

STEPS = (
    Step(
        name="prepare",
        deps={},
        outs=DATA.pick("records", "index", "ehr", "summary"),
        params=("climb.data", "climb.workers"),
        description="neurokit2 ecgsyn records for 4 sites (class priors, gain/noise/wander/rate shifts), an OOD "
        "site with finer labels and a fusion cohort with an EHR table, written as Challenge .hea + .mat and "
        "read back through the real loader",
    ),
    Step(
        name="train",
        deps=DATA.pick("records", "index"),
        outs=DATA.pick("auroc", "encoders", "training"),
        params=(*SETUP, "climb.training"),
        description="RQ1: per seed, four single-task 1-D CNNs and one multitask CNN (all sites, union head, BCE), "
        "equal steps; macro AUROC on every site's test records",
    ),
    Step(
        name="fewshot",
        deps=DATA.pick("records", "index", "encoders"),
        outs=DATA.pick("fewshot"),
        params=(*SETUP, "climb.training", "climb.few_shot"),
        description="RQ2: k ∈ {1, 8, 32} records per class of the OOD site, fine-tuned from the multitask, "
        "single-site and scratch encoders, draws per seed; macro AUROC",
    ),
    Step(
        name="fusion",
        deps=DATA.pick("records", "index", "ehr", "encoders"),
        outs=DATA.pick("fusion", "fusion_predictions"),
        params=(*SETUP, "climb.training", "climb.fusion"),
        description="RQ3: late / concat+MLP / 8-head cross-attention heads on frozen multitask or weak encoders "
        "+ EHR, mortality (AUROC) and length of stay (MAE), full and 8-shot",
    ),
    Step(
        name="figures",
        deps=DATA.pick("records", "index", "auroc", "fewshot", "fusion"),
        outs=DATA.pick("figures"),
        metrics=DATA.pick("metrics"),
        plots={
            "plot_data": Plot(
                DATA["plot_data"],
                x="site",
                y="macro_auroc",
                title="CLIMB: per-site AUROC, single vs multitask",
            )
        },
        params=SETUP,
        description="per-site AUROC single vs multitask, few-shot AUROC vs k, fusion bars, example records per "
        "class (PNG); the tables in metrics.json",
    ),
    Step(
        name="claims",
        deps=DATA.pick("auroc", "fewshot", "fusion", "fusion_predictions", "ehr"),
        outs=DATA.pick("claims"),
        headline=DATA.pick("headline"),
        params=("climb.seeds", "climb.claims", "climb.fusion", "climb.few_shot"),
        description="the card's claims: multitask ≥ single-task per site, few-shot ordering and shrinking gap, "
        "fusion head ranking and encoder carry-over, ECG-JEPA vs UniTS (needs weights)",
    ),
)

PAPER = Paper(
    id="climb",
    title="CLIMB: multitask vs single-task ECG training across sites, few-shot transfer and fusion",
    pipeline=Pipeline.of_paper("climb", "ClimbParams", STEPS),
    benchmarks="stages.papers.climb.benchmarks:run_benchmarks",
    commands=("stages.methods.multitask.commands",),
)
