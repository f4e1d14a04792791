"""Step `mrmc-select`: every method × budget × seed picks its core-set from the pool.

Each method gets its selector options with the section's `balance` filled in (`MRMCParams.options_of`), so
every compared method runs with the same class-balance setting. Single wall-clock timings go to
`timings/select.json` for information; the cost claim reads the interleaved repeats of `mrmc-cost`.

Beside the core-sets it writes their picks per class (`class_counts.parquet`, with the reference rules of
`stages.papers.mrmc.classes` at each budget), each class's mean φ per seed (`plots/class_phi.csv`) and the
figure `figures/class_counts.png`.
"""

from __future__ import annotations

import itertools
import time

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_json, write_parquet
from stages.core.metrics import write_plot_data
from stages.core.progress import progress
from stages.core.seeding import derive_seed
from stages.core.validate import ensure_valid
from stages.datasets.classification import ClassificationArrays, to_arrays
from stages.methods.selection.coreset import SelectionPool, budget_count
from stages.methods.selection.mrmc import MRMCOptions, loss_reduction
from stages.methods.selection.registry import make_selector
from stages.methods.selection.tables import SELECTION_SCHEMA, selection_rows
from stages.methods.selection.tracing import trace_from_table
from stages.models.training import Standardizer
from stages.papers.mrmc.classes import (
    PHI_SHARE,
    UNOFFICIAL,
    class_counts,
    phi_by_class,
    plot_class_counts,
    reference_counts,
    reference_rows,
)

FULL = "full"


def selection_pool(
    pool: ClassificationArrays, trace_table: pl.DataFrame, seed: int, feature_space: str
) -> SelectionPool:
    """The pool as selectors see it for one seed: trace + embeddings (or standardised raw features)."""
    trace, embeddings = trace_from_table(trace_table, seed, pool.sample_ids)
    features = (
        embeddings if feature_space == "embedding" else Standardizer.fit(pool.features)(pool.features).numpy()
    )
    return SelectionPool(features=features, labels=pool.labels, trace=trace)


def selection_call(view: SelectionPool, params, label: str, budget: float, seed: int, base_seed: int):
    """One method's selection at one budget and seed as a no-argument call (its own seeded rng each time)."""
    method = params.methods[label]

    def call() -> np.ndarray:
        selector = make_selector(
            method.selector, params.options_of(label), key=f"mrmc.methods.{label}.options"
        )
        rng = np.random.default_rng(derive_seed(base_seed, "mrmc", "select", label, budget, seed))
        return selector(view, budget_count(budget, len(view)), rng)

    return call


def run_selections(
    pool: ClassificationArrays, trace_table: pl.DataFrame, params, base_seed: int
) -> tuple[pl.DataFrame, list[dict]]:
    """All core-sets (plus the full pool as reference) and the seconds each selection took."""
    frames, timings = [], []
    runs = [
        (seed, label, budget)
        for seed, label in itertools.product(params.seeds, params.methods)
        for budget in params.budgets_of(label)
    ]
    views: dict[int, SelectionPool] = {}
    for seed, label, budget in progress(runs, desc="select", total=len(runs)):
        if seed not in views:
            views[seed] = selection_pool(pool, trace_table, seed, params.feature_space)
            frames.append(selection_rows(FULL, 1.0, seed, pool.sample_ids))
        started = time.perf_counter()
        chosen = selection_call(views[seed], params, label, budget, seed, base_seed)()
        seconds = time.perf_counter() - started
        frames.append(selection_rows(label, budget, seed, pool.sample_ids[chosen]))
        timings.append({"method": label, "budget": budget, "seed": seed, "seconds": round(seconds, 6)})
    return pl.concat(frames), timings


def class_tables(
    pool: ClassificationArrays, pool_frame: pl.DataFrame, trace_table: pl.DataFrame, selections, params
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Picks per class of every core-set plus the reference rules', and each class's mean φ per seed."""
    options = MRMCOptions(**params.methods[params.claims.mrmc_method].options)
    references, phis = [], []
    for seed in params.seeds:
        view = selection_pool(pool, trace_table, seed, params.feature_space)
        phi = loss_reduction(view.trace.loss, options.fit)
        phis.append(phi_by_class(phi, view.labels, seed))
        for budget in params.budgets:
            counts = reference_counts(
                phi, view.features, view.labels, budget_count(budget, len(view)), options
            )
            references.append(reference_rows(seed, budget, counts))
    trained = class_counts(selections.filter(pl.col("method") != FULL), pool_frame)
    return pl.concat([trained, *references]).sort(["method", "budget", "seed", "label"]), pl.concat(phis)


def run(ctx: StepContext) -> None:
    """Select, validate and write `selections.parquet`, the class counts, their figure and the timings."""
    params = ctx.params
    pool_frame = read_parquet(ctx.input("pool"))
    pool = to_arrays(pool_frame)
    trace_table = read_parquet(ctx.input("trace"))
    selections, timings = run_selections(pool, trace_table, params, ctx.common.seed)
    ensure_valid(selections, SELECTION_SCHEMA, "mrmc selections")
    ctx.log(f"{len(timings)} core-sets selected")
    counts, phi = class_tables(pool, pool_frame, trace_table, selections, params)
    write_parquet(selections, ctx.output("selections"))
    write_parquet(counts, ctx.output("class_counts"))
    write_plot_data(phi, ctx.output("class_phi"))
    names = params.claims
    shown = [names.random_method, names.mrmc_method, names.pure_method, UNOFFICIAL, PHI_SHARE]
    plot_class_counts(counts, phi, shown, ctx.output("figure"))
    write_json({"selection_seconds": timings}, ctx.output("timings"))
