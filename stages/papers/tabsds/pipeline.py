"""The TabSDS pipeline: its artefacts and steps (the source `dvc.yaml` is generated from)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stages.core.steps import Catalog, Pipeline, Plot, Step
from stages.papers.paper import Paper

DATA = Catalog(
    "data/tabsds",
    tables="tables",
    datasets="datasets.json",
    runs="runs.parquet",
    samples="samples",
    timings="timings/synthesize.json",
    metrics="metrics.json",
    plot_data="plots/nc_sweep.csv",
    figures="figures",
    time_summary="timings/time_summary.json",
    time_figure="timings/time_per_method.png",
    timing_claims="timings/claims.json",
    claims="claims.json",
    headline="headline.json",
)
SCALE = ("tabsds.scale", "tabsds.default", "tabsds.full")


def own_table_deps(raw_params: Mapping[str, Any]) -> dict[str, str]:
    """Every table of `tabsds.own_tables` is a dep of prepare (editing it reruns the pipeline)."""
    own = (raw_params.get("tabsds") or {}).get("own_tables") or {}
    return {
        f"own_{name}": entry["path"]
        for name, entry in own.items()
        if isinstance(entry, dict) and "path" in entry
    }


STEPS = (
    Step(
        name="prepare",
        deps={},
        dynamic_deps=own_table_deps,
        outs=DATA.pick("tables", "datasets"),
        params=(*SCALE, "tabsds.test_fraction", "tabsds.split_seed", "tabsds.own_tables"),
        description="load the offline tables (sklearn, statsmodels) and your own, check them, split 50/50 (seed 123)",
    ),
    Step(
        name="synthesize",
        deps=DATA.pick("tables", "datasets"),
        outs=DATA.pick("runs", "samples", "timings"),
        params=(
            "common.seed",
            *SCALE,
            "tabsds.synthesizers",
            "tabsds.sweep",
            "tabsds.metrics",
            "tabsds.samples_kept",
        ),
        description="every dataset × seed × synthesizer and the n_c sweep: fit, sample, score against held-out rows",
    ),
    Step(
        name="figures",
        deps=DATA.pick("runs", "tables", "samples"),
        outs=DATA.pick("figures"),
        metrics=DATA.pick("metrics"),
        plots={
            "plot_data": Plot(
                DATA["plot_data"], x="dcr_median", y="detection_auroc", title="TabSDS: n_c sweep"
            ),
        },
        params=(*SCALE, "tabsds.samples_kept", "tabsds.claims"),
        description="fidelity/utility/privacy table, detection vs DCR by n_c, marginals real vs synthetic",
    ),
    Step(
        name="timing",
        deps=DATA.pick("timings"),
        outs=DATA.pick("time_summary", "time_figure", claims="timing_claims"),
        params=(*SCALE, "tabsds.claims"),
        description="benchmark step (timings/ only, read by no data output): time per method (log scale) and "
        "the speed claim",
    ),
    Step(
        name="claims",
        deps=DATA.pick("runs"),
        outs=DATA.pick("claims"),
        headline=DATA.pick("headline"),
        params=(*SCALE, "tabsds.synthesizers", "tabsds.claims"),
        description="check the card's claims about the data (competitive with CTGAN/TVAE, the n_c trade-off)",
    ),
)

PAPER = Paper(
    id="tabsds",
    title="TabSDS: tabular synthesis by interpolated order statistics and sequential data shuffling",
    pipeline=Pipeline.of_paper("tabsds", "TabSDSParams", STEPS),
    benchmarks="stages.papers.tabsds.benchmarks:run_benchmarks",
    commands=("stages.methods.tabular.commands",),
)
