"""Step `llm_srbench-search`: every searcher on every problem, scored by the benchmark's metrics — NMSE on the
in-domain test and OOD rows (NaN predictions dropped), Acc_τ on both, symbolic accuracy by the stand-in
judge — the searcher × family table (metrics.json) and the three figures."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_json, write_parquet
from stages.core.metrics import write_metrics, write_plot_data
from stages.core.progress import progress
from stages.core.seeding import derive_seed
from stages.methods.equations.feynman import complexity
from stages.methods.equations.metrics import accuracy_tau, nmse, symbolic_accuracy
from stages.methods.equations.problem import Problem, read_problem
from stages.methods.equations.searchers import build_searcher
from stages.papers.llm_srbench.figures import write_figures
from stages.papers.llm_srbench.params import LLMSRBenchParams


def score(problem: Problem, result, params: LLMSRBenchParams, seed: int) -> dict:
    """The metrics of one searcher's answer on one problem."""
    row: dict = {"equation": "", "sa": False, "sa_how": "no equation"}
    for split, suffix in (("test", "id"), ("ood_test", "ood")):
        if split == "ood_test" and not problem.has_ood:
            row[f"nmse_{suffix}"], row[f"acc_{suffix}"] = None, None
            continue
        X, y = problem.split(split)
        prediction = np.full(len(y), np.nan) if result.predict is None else result.predict(X)
        row[f"nmse_{suffix}"] = nmse(y, prediction)
        row[f"acc_{suffix}"] = accuracy_tau(y, prediction, params.tau)
    if result.expression is not None:
        rng = np.random.default_rng(derive_seed(seed, "llm_srbench", "sa", problem.name))
        judgement = symbolic_accuracy(result.expression, problem, rng, params.sa_rtol, params.sa_points)
        row.update(equation=str(result.expression), sa=judgement.equivalent, sa_how=judgement.how)
    return row


def run_all(
    problems: list[Problem], params: LLMSRBenchParams, seed: int, log=print
) -> tuple[pl.DataFrame, dict, dict]:
    """Every (problem, searcher): metric rows, per-searcher skip reasons, wall seconds per run."""
    searchers = {
        label: build_searcher(entry.searcher, params.searcher_options(label))
        for label, entry in params.searchers.items()
    }
    rows, skipped, seconds = [], {}, {}
    for problem in progress(problems, desc="llm_srbench search"):
        for label, searcher in searchers.items():
            if label in skipped:
                continue
            start = time.perf_counter()
            result = searcher.search(problem, derive_seed(seed, "llm_srbench", "search", problem.name, label))
            if result.skipped:
                skipped[label] = result.skipped
                log(f"{label} skipped: {result.skipped}")
                continue
            row = score(problem, result, params, seed)
            seconds[f"{problem.name}/{label}"] = time.perf_counter() - start
            rows.append(
                {
                    "problem": problem.name,
                    "family": problem.family,
                    "source": problem.source,
                    "complexity": complexity(problem.sympy_expression),
                    "searcher": label,
                    "evaluations": result.evaluations,
                    **row,
                }
            )
    schema = {"nmse_ood": pl.Float64, "acc_ood": pl.Boolean}
    return pl.DataFrame(rows, schema_overrides=schema), skipped, seconds


def family_table(runs: pl.DataFrame) -> pl.DataFrame:
    """Per searcher × family: problems, median NMSE ID/OOD, Acc_τ ID/OOD share, SA share."""
    return (
        runs.group_by("searcher", "family")
        .agg(
            pl.len().alias("problems"),
            pl.col("nmse_id").median().alias("median_nmse_id"),
            pl.col("nmse_ood").median().alias("median_nmse_ood"),
            pl.col("acc_id").cast(pl.Float64).mean().alias("acc_id"),
            pl.col("acc_ood").cast(pl.Float64).mean().alias("acc_ood"),
            pl.col("sa").cast(pl.Float64).mean().alias("sa"),
        )
        .sort("searcher", "family")
    )


def _round(value):
    return None if value is None else float(f"{value:.4g}")


def metrics(table: pl.DataFrame, skipped: dict) -> dict:
    cells: dict = {}
    for row in table.iter_rows(named=True):
        cells.setdefault(row["searcher"], {})[row["family"]] = {
            key: (row[key] if key == "problems" else _round(row[key]))
            for key in ("problems", "median_nmse_id", "median_nmse_ood", "acc_id", "acc_ood", "sa")
        }
    return {"searcher_family": cells, "skipped_searchers": skipped}


def run(ctx: StepContext) -> None:
    params: LLMSRBenchParams = ctx.params
    index = read_parquet(ctx.input("index"))
    folder = Path(ctx.input("problems"))
    problems = [read_problem(folder / name) for name in index["problem"]]
    runs, skipped, seconds = run_all(problems, params, ctx.common.seed, ctx.log)
    write_parquet(runs, ctx.output("runs"))
    table = family_table(runs)
    write_metrics(metrics(table, skipped), ctx.output("metrics"))
    write_plot_data(table, ctx.output("plot_data"))
    write_figures(runs, params, ctx.output("figures"))
    per_searcher = {
        label: float(np.median([s for key, s in seconds.items() if key.endswith(f"/{label}")]))
        for label in runs["searcher"].unique().sort()
    }
    write_json({"median_seconds_per_problem": per_searcher, "seconds": seconds}, ctx.output("timings"))
