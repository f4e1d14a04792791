"""The DD3D pipeline: its artefacts and steps (the source `dvc.yaml` is generated from)."""

from __future__ import annotations

from stages.core.steps import Catalog, Pipeline, Plot, Step
from stages.papers.paper import Paper

DATA = Catalog(
    "data/dd3d",
    clouds="clouds.parquet",
    invariance="invariance.parquet",
    data_summary="data_summary.json",
    distilled="distilled.parquet",
    distil_log="distil_log.parquet",
    distil_timings="timings/distil.json",
    results="results.parquet",
    evaluate_timings="timings/evaluate.json",
    figures="figures",
    metrics="metrics.json",
    plot_data="plots/oa.csv",
    claims="claims.json",
    headline="headline.json",
)
SCALE = ("dd3d.scale", "dd3d.default", "dd3d.full")

STEPS = (
    Step(
        name="data",
        deps={},
        outs=DATA.pick("clouds", "invariance", "data_summary"),
        params=(*SCALE, "common.seed"),
        description="8 trimesh shape classes surface-sampled, in the aligned, SO(3) and SO(3)+PCA settings "
        "(validated table); the rotator's invariance per test cloud (Chamfer of canonical forms)",
    ),
    Step(
        name="distil",
        deps=DATA.pick("clouds"),
        outs=DATA.pick("distilled", "distil_log", timings="distil_timings"),
        params=(*SCALE, "common.seed"),
        description="DD3D (SIREN generator + gradient matching) per setting and cpc, fixed-xyz DC, the "
        "high-resolution distillation, per seed; matching loss per iteration and autograd's saved bytes",
    ),
    Step(
        name="evaluate",
        deps=DATA.pick("clouds", "distilled"),
        outs=DATA.pick("results", timings="evaluate_timings"),
        params=(*SCALE, "common.seed"),
        description="a fresh PointNet per set and seed (distilled, random real subset, full data), tested "
        "on the real test clouds: final-epoch OA and the reference's max over epochs",
    ),
    Step(
        name="figures",
        deps=DATA.pick("clouds", "distilled", "results", "distil_log"),
        outs=DATA.pick("figures"),
        metrics=DATA.pick("metrics"),
        plots={"plot_data": Plot(DATA["plot_data"], x="run", y="final_oa", title="DD3D: OA per method")},
        params=SCALE,
        description="distilled clouds beside real ones per class, OA per method and setting, memory vs "
        "resolution, the OA table",
    ),
    Step(
        name="claims",
        deps=DATA.pick("results", "invariance", "distil_log"),
        outs=DATA.pick("claims"),
        headline=DATA.pick("headline"),
        params=(*SCALE, "dd3d.claims"),
        description="the card's claims: DD3D vs random subset and fixed-xyz DC, the rotator ablation, "
        "rotator invariance, cross-resolution",
    ),
)

PAPER = Paper(
    id="dd3d",
    title="DD3D: point cloud dataset distillation (PCA rotator, resolution-free SIREN generator)",
    pipeline=Pipeline.of_paper("dd3d", "DD3DParams", STEPS),
    benchmarks="stages.papers.dd3d.benchmarks:run_benchmarks",
    commands=("stages.methods.distillation.commands",),
)
