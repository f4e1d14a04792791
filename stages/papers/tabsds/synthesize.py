"""Step `tabsds-synthesize`: every dataset × seed × synthesizer (and TabSDS at every n_c of the sweep):
fit on the training rows, sample a table of the same size, score it against the held-out rows.

Writes one row of metrics per run (`runs.parquet`), the fit and sample seconds per run (only in
`timings/synthesize.json`), and the first seed's synthetic tables of `samples_kept` for the marginal figures.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_json, read_parquet, write_json, write_parquet
from stages.core.seeding import derive_seed, pin_threads
from stages.methods.tabular.metrics import evaluate
from stages.methods.tabular.registry import SYNTHESIZERS
from stages.methods.tabular.table import infer_spec
from stages.papers.tabsds.params import TabSDSParams

SWEEP = "sweep"


@dataclass(frozen=True)
class RunSpec:
    """One synthesizer configuration: its label, registered name, options, and n_c (TabSDS family)."""

    label: str
    synthesizer: str
    options: dict
    group: str  # "method" (compared) or "sweep" (the n_c sweep)

    @property
    def n_levels(self) -> int | None:
        return self.options.get("n_levels") if self.synthesizer in ("tabsds", "tabsjppds") else None


def run_specs(params: TabSDSParams) -> list[RunSpec]:
    """The compared synthesizers (deep ones at the grid's epochs) and the n_c sweep of `params.sweep`."""
    specs = []
    for label in params.labels:
        entry = params.synthesizers[label]
        options = dict(entry.options)
        if "epochs" in SYNTHESIZERS.get(entry.synthesizer).Options.model_fields:
            options["epochs"] = params.grid.deep_epochs
        if entry.synthesizer in ("tabsds", "tabsjppds"):
            options = SYNTHESIZERS.get(entry.synthesizer).Options(**options).model_dump()
        specs.append(RunSpec(label, entry.synthesizer, options, "method"))
    base = params.synthesizers[params.sweep]
    for n_levels in params.grid.n_levels:
        options = {**base.options, "n_levels": n_levels}
        specs.append(RunSpec(f"{params.sweep}_nc{n_levels}", base.synthesizer, options, SWEEP))
    return specs


def synthesize_one(
    spec: RunSpec, train: pl.DataFrame, base_seed: int, dataset: str, seed: int
) -> tuple[pl.DataFrame, float, float]:
    """Fit and sample once; returns the table and the fit and sample seconds."""
    synthesizer = SYNTHESIZERS.build(
        spec.synthesizer, spec.options, key=f"tabsds.synthesizers.{spec.label}.options"
    )
    fit_rng = np.random.default_rng(derive_seed(base_seed, "tabsds", dataset, spec.label, seed, "fit"))
    sample_rng = np.random.default_rng(derive_seed(base_seed, "tabsds", dataset, spec.label, seed, "sample"))
    start = time.perf_counter()
    synthesizer.fit(train, fit_rng)
    fitted = time.perf_counter()
    table = synthesizer.sample(sample_rng)
    return table, fitted - start, time.perf_counter() - fitted


def warm_up(specs: list[RunSpec], train: pl.DataFrame, base_seed: int) -> None:
    """Fit and sample every synthesizer once, untimed (deep peers for one epoch), so that no timed run pays
    for first-call imports and caches (TabSDS's first call took 58 ms against 3–4 ms after it)."""
    for spec in specs:
        if spec.group != "method":
            continue
        options = {**spec.options, "epochs": 1} if "epochs" in spec.options else spec.options
        synthesize_one(RunSpec(spec.label, spec.synthesizer, options, spec.group), train, base_seed, "", -1)


def run(ctx: StepContext) -> None:
    params: TabSDSParams = ctx.params
    pin_threads(1)
    info = read_json(ctx.input("datasets"))
    specs = run_specs(params)
    first = ctx.input("tables") / params.grid.datasets[0] / "train.parquet"
    warm_up(specs, read_parquet(first), ctx.common.seed)
    rows, timings = [], []
    for dataset in params.grid.datasets:
        folder = ctx.input("tables") / dataset
        train, test = read_parquet(folder / "train.parquet"), read_parquet(folder / "test.parquet")
        spec_table = infer_spec(train, where=f"{dataset} training rows")
        meta = info[dataset]
        for seed in params.grid.seeds:
            for spec in specs:
                synthetic, fit_s, sample_s = synthesize_one(spec, train, ctx.common.seed, dataset, seed)
                scores = evaluate(
                    train,
                    test,
                    synthetic,
                    meta["target"],
                    meta["task"],
                    params.metrics,
                    derive_seed(ctx.common.seed, "tabsds-metrics", dataset, seed),
                    spec_table,
                )
                rows.append(
                    {
                        "dataset": dataset,
                        "task": meta["task"],
                        "seed": seed,
                        "label": spec.label,
                        "synthesizer": spec.synthesizer,
                        "group": spec.group,
                        "n_levels": spec.n_levels,
                        **scores,
                    }
                )
                timings.append(
                    {
                        "dataset": dataset,
                        "seed": seed,
                        "label": spec.label,
                        "fit_seconds": fit_s,
                        "sample_seconds": sample_s,
                        "seconds": fit_s + sample_s,
                    }
                )
                if seed == params.grid.seeds[0] and spec.label in params.samples_kept:
                    write_parquet(synthetic, ctx.output("samples") / dataset / f"{spec.label}.parquet")
            ctx.log(f"{dataset} seed {seed}: {len(specs)} synthesizers")
    write_parquet(pl.DataFrame(rows, infer_schema_length=None), ctx.output("runs"))
    write_json({"threads": 1, "runs": timings}, ctx.output("timings"))
