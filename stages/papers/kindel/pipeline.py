"""The KinDEL pipeline: its artefacts and steps (the source `dvc.yaml` is generated from)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stages.core.inputs import folder_problems
from stages.core.steps import Catalog, Pipeline, Plot, Step
from stages.methods.del_screens.schema import (
    HELDOUT_KINDS,
    SPLIT_KINDS,
    heldout_path,
    library_path,
    split_path,
)
from stages.papers.paper import Paper

DATA = Catalog(
    "data/kindel",
    library="library",
    truth="truth.parquet",
    screen="screen.json",
    baselines="baselines.parquet",
    compose="compose.parquet",
    offsets="offsets.json",
    scores="scores.parquet",
    metrics="metrics.json",
    plot_data="plots/neg_spearman.csv",
    figures="figures",
    claims="claims.json",
    headline="headline.json",
)
SCALE = ("kindel.scale", "kindel.default", "kindel.full")
SOURCE = ("kindel.source", "kindel.folder", "kindel.target", "kindel.max_rows")


def folder_deps(raw_params: Mapping[str, Any]) -> dict[str, str]:
    """A real KinDEL folder is a dep of the library step (editing its files reruns the pipeline)."""
    section = raw_params.get("kindel") or {}
    if section.get("source") == "folder" and section.get("folder"):
        return {"kindel_folder": section["folder"]}
    return {}


def folder_problems_of(params: Any) -> list[str]:
    """A KinDEL folder must hold the target's library, both split tables and both held-out tables."""
    if params.source != "folder" or not params.folder:
        return []
    required = [
        library_path(params.target),
        *(split_path(params.target, kind) for kind in SPLIT_KINDS),
        *(heldout_path(params.target, kind) for kind in HELDOUT_KINDS),
    ]
    return folder_problems(params.folder, "kindel.folder", required)


STEPS = (
    Step(
        name="library",
        deps={},
        dynamic_deps=folder_deps,
        outs=DATA.pick("library", "truth", "screen"),
        params=("common.seed", *SCALE, *SOURCE, "kindel.simulation"),
        description="simulate a 3-cycle DEL in the KinDEL schema (RDKit enumeration, ZIP counts, held-out Kd) "
        "or read your KinDEL folder; validate every table with Great Expectations",
    ),
    Step(
        name="baselines",
        deps=DATA.pick("library"),
        outs={"predictions": DATA["baselines"]},
        params=(
            "common.seed",
            *SCALE,
            "kindel.target",
            "kindel.baselines",
            "kindel.baseline_radius",
            "kindel.baseline_bits",
        ),
        description="RF, XGBoost, KNN, DNN on Morgan r=2 fingerprints per split kind × split: test and held-out "
        "predictions",
    ),
    Step(
        name="compose",
        deps=DATA.pick("library"),
        outs={"predictions": DATA["compose"], "offsets": DATA["offsets"]},
        params=("common.seed", *SCALE, "kindel.target", "kindel.compose"),
        description="DEL-Compose (ZIP counts, learned replicate offsets, Morgan r=3 with chirality) per split "
        "kind × split",
    ),
    Step(
        name="evaluate",
        deps={**DATA.pick("library", "truth"), "baselines": DATA["baselines"], "compose": DATA["compose"]},
        outs=DATA.pick("scores", "figures"),
        metrics=DATA.pick("metrics"),
        plots={
            "plot_data": Plot(DATA["plot_data"], x="column", y="neg_spearman", title="KinDEL: held-out −ρ")
        },
        params=(*SCALE, "kindel.target", "kindel.baselines", "kindel.compose"),
        description="test MSE and held-out −ρ in the four columns, ranks, predicted vs measured, counts vs "
        "enrichment",
    ),
    Step(
        name="claims",
        deps=DATA.pick("scores", "metrics", "screen", "offsets"),
        outs=DATA.pick("claims"),
        headline=DATA.pick("headline"),
        params=(*SCALE, "kindel.baselines", "kindel.compose", "kindel.claims"),
        description="disynthon vs random, per-column winners, Compose sanity (three-way verdicts over splits)",
    ),
)

PAPER = Paper(
    id="kindel",
    title="KinDEL: a DNA-encoded library benchmark, DEL-Compose count models and fingerprint baselines",
    pipeline=Pipeline.of_paper("kindel", "KinDELParams", STEPS),
    benchmarks="stages.papers.kindel.benchmarks:run_benchmarks",
    commands=("stages.methods.del_screens.commands",),
    input_check="stages.papers.kindel.pipeline:folder_problems_of",
)
