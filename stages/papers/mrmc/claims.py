"""Step `mrmc-claims`: check the paper's three claims on the measured runs."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.claims import Claim, write_claims
from stages.core.io import read_json, read_parquet
from stages.core.steps import StepContext
from stages.methods.selection.registry import SELECTORS
from stages.papers.mrmc.evaluate import summarise
from stages.papers.mrmc.params import MRMCParams
from stages.papers.mrmc.select import FULL


def _mean_accuracy(summary: pl.DataFrame, method: str, budget: float) -> float:
    row = summary.filter((pl.col("method") == method) & (pl.col("budget") == budget))
    return float(row["mean_accuracy"][0])


def accuracy_claim(summary: pl.DataFrame, params: MRMCParams) -> Claim:
    """MRMC ≥ random at every budget, with the largest gap at the smallest budget."""
    names = params.claims
    gaps = {
        b: _mean_accuracy(summary, names.mrmc_method, b) - _mean_accuracy(summary, names.random_method, b)
        for b in params.budgets
    }
    smallest = min(params.budgets)
    holds = all(gap >= 0 for gap in gaps.values()) and max(gaps, key=gaps.get) == smallest
    return Claim(
        id="accuracy_vs_random",
        statement="MRMC's accuracy is at least random's at each budget, and the gap is largest at the smallest budget.",
        measured={
            "mrmc_accuracy": {
                f"{b:.2f}": round(_mean_accuracy(summary, names.mrmc_method, b), 4) for b in gaps
            },
            "random_accuracy": {
                f"{b:.2f}": round(_mean_accuracy(summary, names.random_method, b), 4) for b in gaps
            },
            "gap": {f"{b:.2f}": round(gap, 4) for b, gap in gaps.items()},
        },
        criterion="mean over seeds: gap(b) = acc_mrmc(b) − acc_random(b) ≥ 0 for every b, argmax_b gap(b) = min budget",
        holds=holds,
    )


def scoring_seconds(timings: dict) -> dict[str, float]:
    """Mean seconds per selection call (scoring + picking, given the trace) per method."""
    frame = pl.DataFrame(timings["selection_seconds"])
    return dict(frame.group_by("method").agg(pl.col("seconds").mean()).iter_rows())


def selection_seconds(scoring: dict[str, float], trace_seconds: float, methods: dict) -> dict[str, float]:
    """Selection cost per method: its scoring time, plus the trace for methods that need one."""
    return {
        method: seconds + (trace_seconds if SELECTORS.get(methods[method].selector).needs_trace else 0.0)
        for method, seconds in scoring.items()
    }


def cost_claim(params: MRMCParams, trace_timings: dict, select_timings: dict, train_timings: dict) -> Claim:
    """MRMC's selection cost is within the ratio of the cheapest score-based baseline, and its total is
    below full-data training at the cost budget."""
    names = params.claims
    trace_seconds = float(np.mean(list(trace_timings["trace_seconds"].values())))
    scoring = scoring_seconds(select_timings)
    costs = selection_seconds(scoring, trace_seconds, params.methods)
    cheapest = min(names.score_baselines, key=costs.get)
    ratio = costs[names.mrmc_method] / costs[cheapest]
    train = pl.DataFrame(train_timings["train_seconds"])
    full_seconds = float(train.filter(pl.col("method") == FULL)["seconds"].mean())
    core_seconds = float(
        train.filter((pl.col("method") == names.mrmc_method) & (pl.col("budget") == names.cost_budget))[
            "seconds"
        ].mean()
    )
    total = costs[names.mrmc_method] + core_seconds
    return Claim(
        id="selection_cost",
        statement=f"MRMC selects within {names.selection_time_ratio}× the time of the cheapest score-based baseline, "
        f"and selection + training at {names.cost_budget:.0%} costs less than full-data training.",
        measured={
            "trace_seconds": round(trace_seconds, 3),
            "selection_seconds": {method: round(value, 4) for method, value in sorted(costs.items())},
            "scoring_only_seconds": {method: round(value, 5) for method, value in sorted(scoring.items())},
            "mrmc_to_cheapest_scoring_ratio": round(scoring[names.mrmc_method] / scoring[cheapest], 4),
            "cheapest_baseline": cheapest,
            "mrmc_to_cheapest_ratio": round(ratio, 4),
            "mrmc_total_seconds": round(total, 3),
            "full_training_seconds": round(full_seconds, 3),
        },
        criterion=f"selection(mrmc)/selection({cheapest}) ≤ {names.selection_time_ratio} and "
        f"selection(mrmc) + train(mrmc @ {names.cost_budget}) < train(full); trace time counts for every "
        "trace-based method",
        holds=bool(ratio <= names.selection_time_ratio and total < full_seconds),
    )


def class_count_ratio(
    selections: pl.DataFrame, pool_labels: pl.DataFrame, method: str, budget: float
) -> float:
    """Mean over seeds of (largest class count / smallest class count, floored at 1) in the core-set."""
    labelled = selections.filter((pl.col("method") == method) & (pl.col("budget") == budget)).join(
        pool_labels, on="sample_id"
    )
    n_classes = pool_labels["label"].n_unique()
    ratios = []
    for (_,), rows in labelled.group_by(["seed"]):
        counts = rows["label"].value_counts()["count"].to_numpy()
        smallest = counts.min() if len(counts) == n_classes else 0
        ratios.append(counts.max() / max(smallest, 1))
    return float(np.mean(ratios))


def balance_claim(
    summary: pl.DataFrame, selections: pl.DataFrame, pool: pl.DataFrame, params: MRMCParams
) -> Claim:
    """Without the balance constraint class counts are uneven and accuracy at the smallest budget drops."""
    names = params.claims
    budget = min(params.budgets)
    labels = pool.select("sample_id", "label")
    unbalanced_ratio = class_count_ratio(selections, labels, names.unbalanced_method, budget)
    balanced_ratio = class_count_ratio(selections, labels, names.mrmc_method, budget)
    drop = _mean_accuracy(summary, names.mrmc_method, budget) - _mean_accuracy(
        summary, names.unbalanced_method, budget
    )
    return Claim(
        id="balance_matters",
        statement="Without the balance constraint, core-set class counts are uneven and accuracy at the smallest "
        "budget drops.",
        measured={
            "budget": budget,
            "class_count_ratio_unbalanced": round(unbalanced_ratio, 3),
            "class_count_ratio_balanced": round(balanced_ratio, 3),
            "accuracy_balanced": round(_mean_accuracy(summary, names.mrmc_method, budget), 4),
            "accuracy_unbalanced": round(_mean_accuracy(summary, names.unbalanced_method, budget), 4),
            "accuracy_drop": round(drop, 4),
        },
        criterion=f"max/min class count without balance > {names.uneven_ratio} and "
        "acc(balanced) − acc(unbalanced) > 0 at the smallest budget (mean over seeds)",
        holds=bool(unbalanced_ratio > names.uneven_ratio and drop > 0),
    )


def run(ctx: StepContext) -> None:
    """Compute the three claims and write `claims.json`."""
    params: MRMCParams = ctx.params
    summary = summarise(read_parquet(ctx.input("results")))
    claims = [
        accuracy_claim(summary, params),
        cost_claim(
            params,
            read_json(ctx.input("trace_timings")),
            read_json(ctx.input("select_timings")),
            read_json(ctx.input("train_timings")),
        ),
        balance_claim(
            summary, read_parquet(ctx.input("selections")), read_parquet(ctx.input("pool")), params
        ),
    ]
    for claim in claims:
        ctx.log(f"{claim.id}: {'holds' if claim.holds else 'does NOT hold'}")
    write_claims(claims, ctx.output("claims"))
