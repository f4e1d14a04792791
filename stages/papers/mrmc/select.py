"""Step `mrmc-select`: every method × budget × seed picks its core-set from the pool.

Besides the core-sets, the step times the selection calls for the cost claim: after the selections, it repeats
every call that took under `REPEAT_BELOW_SECONDS` another `TIMING_REPEATS - 1` times, interleaved in a seeded
random order (`stages.core.timing`, so a slow spell of the machine hits every method alike).
The claims stage compares medians of these repeats. Timings go to `timings/select.json` only; the repeats
recompute the same core-sets and change no data output.
"""

from __future__ import annotations

import itertools
import time

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_json, write_parquet
from stages.core.progress import progress
from stages.core.seeding import derive_seed
from stages.core.timing import interleaved_seconds
from stages.core.validate import ensure_valid
from stages.datasets.classification import ClassificationArrays, to_arrays
from stages.methods.selection.coreset import SelectionPool, budget_count
from stages.methods.selection.registry import make_selector
from stages.methods.selection.tables import SELECTION_SCHEMA, selection_rows
from stages.methods.selection.tracing import trace_from_table
from stages.models.training import Standardizer

FULL = "full"
TIMING_REPEATS = 7
REPEAT_BELOW_SECONDS = 0.5


def selection_pool(
    pool: ClassificationArrays, trace_table: pl.DataFrame, seed: int, feature_space: str
) -> SelectionPool:
    """The pool as selectors see it for one seed: trace + embeddings (or standardised raw features)."""
    trace, embeddings = trace_from_table(trace_table, seed, pool.sample_ids)
    features = (
        embeddings if feature_space == "embedding" else Standardizer.fit(pool.features)(pool.features).numpy()
    )
    return SelectionPool(features=features, labels=pool.labels, trace=trace)


def run_selections(
    pool: ClassificationArrays,
    trace_table: pl.DataFrame,
    params,
    base_seed: int,
    repeats: int = TIMING_REPEATS,
) -> tuple[pl.DataFrame, list[dict], list[dict]]:
    """All core-sets (plus the full pool as reference), the seconds each selection took, and the repeated
    timings (:func:`repeated_timings`)."""
    frames, timings = [], []
    runs = list(itertools.product(params.seeds, params.methods.items(), params.budgets))
    views: dict[int, SelectionPool] = {}
    for seed, (label, method), budget in progress(runs, desc="select", total=len(runs)):
        if seed not in views:
            views[seed] = selection_pool(pool, trace_table, seed, params.feature_space)
            frames.append(selection_rows(FULL, 1.0, seed, pool.sample_ids))
        selector = make_selector(method.selector, method.options)
        rng = np.random.default_rng(derive_seed(base_seed, "mrmc", "select", label, budget, seed))
        started = time.perf_counter()
        chosen = selector(views[seed], budget_count(budget, len(pool)), rng)
        seconds = time.perf_counter() - started
        frames.append(selection_rows(label, budget, seed, pool.sample_ids[chosen]))
        timings.append({"method": label, "budget": budget, "seed": seed, "seconds": round(seconds, 6)})
    repeated = repeated_timings(views, len(pool), params, base_seed, timings, repeats)
    return pl.concat(frames), timings, repeated


def repeated_timings(
    views: dict[int, SelectionPool],
    pool_size: int,
    params,
    base_seed: int,
    first: list[dict],
    repeats: int = TIMING_REPEATS,
    below_seconds: float = REPEAT_BELOW_SECONDS,
) -> list[dict]:
    """Per (method, budget, seed): the first call's seconds plus `repeats - 1` repeats of the calls faster than
    `below_seconds`, interleaved in a seeded random order (`stages.core.timing`); slower calls keep one timing."""
    seconds = {(entry["method"], entry["budget"], entry["seed"]): [entry["seconds"]] for entry in first}
    for seed, view in views.items():
        calls = {
            (label, budget): _selection_call(view, pool_size, label, method, budget, seed, base_seed)
            for label, method in params.methods.items()
            for budget in params.budgets
            if seconds[(label, budget, seed)][0] < below_seconds
        }
        if repeats > 1 and calls:
            measured = interleaved_seconds(
                calls, repeats - 1, derive_seed(base_seed, "timing", seed), warmup=False
            )
            for (label, budget), times in measured.items():
                seconds[(label, budget, seed)] += [round(value, 6) for value in times]
    return [
        {"method": label, "budget": budget, "seed": seed, "seconds": values}
        for (label, budget, seed), values in seconds.items()
    ]


def _selection_call(
    view: SelectionPool, pool_size: int, label: str, method, budget: float, seed: int, base_seed: int
):
    """One selection as a no-argument call (the same selector and rng the step used)."""

    def call():
        selector = make_selector(method.selector, method.options)
        rng = np.random.default_rng(derive_seed(base_seed, "mrmc", "select", label, budget, seed))
        return selector(view, budget_count(budget, pool_size), rng)

    return call


def run(ctx: StepContext) -> None:
    """Select, validate and write `selections.parquet` and the selection timings."""
    pool = to_arrays(read_parquet(ctx.input("pool")))
    trace_table = read_parquet(ctx.input("trace"))
    selections, timings, repeated = run_selections(pool, trace_table, ctx.params, ctx.common.seed)
    ensure_valid(selections, SELECTION_SCHEMA, "mrmc selections")
    ctx.log(f"{len(timings)} core-sets selected")
    write_parquet(selections, ctx.output("selections"))
    write_json(
        {"selection_seconds": timings, "repeated_seconds": repeated, "repeats": TIMING_REPEATS},
        ctx.output("timings"),
    )
