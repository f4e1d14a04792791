"""Step `mrmc-claims`: check the paper's three claims on the measured runs, with intervals over seeds.

Every comparison is paired by seed (each seed's models share their initialisation) and judged through a t
interval of the mean over seeds (`stages.core.claims`): holds, fails, or inconclusive when the interval
contains the threshold or there are too few seeds. Selection timings are medians of interleaved repeats
measured in the select step; trace and training seconds are one timing per seed.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.claims import Claim, compare, compare_paired, verdict_claim, write_claims
from stages.core.context import StepContext
from stages.core.io import read_json, read_parquet
from stages.methods.selection.registry import SELECTORS
from stages.papers.mrmc.params import MRMCParams
from stages.papers.mrmc.select import FULL


def accuracy_per_seed(results: pl.DataFrame, method: str, budget: float) -> dict[str, float]:
    """Test accuracy per seed of one (method, budget)."""
    rows = results.filter((pl.col("method") == method) & (pl.col("budget") == budget)).sort("seed")
    if rows.height == 0:
        raise ValueError(f"results have no rows for method {method!r} at budget {budget}")
    return {str(seed): float(value) for seed, value in zip(rows["seed"], rows["test_accuracy"], strict=True)}


def _mean(values: dict[str, float]) -> float:
    return float(np.mean(list(values.values())))


def _pct(budget: float) -> str:
    return f"{budget:.0%}"


def accuracy_claim(results: pl.DataFrame, params: MRMCParams) -> Claim:
    """MRMC ≥ random at every budget, with the largest gap at the smallest budget (paired over seeds)."""
    names, confidence = params.claims, params.claims.confidence
    mrmc = {b: accuracy_per_seed(results, names.mrmc_method, b) for b in params.budgets}
    random = {b: accuracy_per_seed(results, names.random_method, b) for b in params.budgets}
    gaps = {b: {seed: mrmc[b][seed] - random[b][seed] for seed in mrmc[b]} for b in params.budgets}
    smallest = min(params.budgets)
    evidence = [
        compare(f"MRMC − random accuracy at {_pct(b)}", gaps[b], 0.0, "above", confidence)
        for b in params.budgets
    ]
    evidence += [
        compare_paired(
            f"gap at {_pct(smallest)} − gap at {_pct(b)}", gaps[smallest], gaps[b], 0.0, "above", confidence
        )
        for b in params.budgets
        if b != smallest
    ]
    return verdict_claim(
        id="accuracy_vs_random",
        statement="MRMC's accuracy is at least random's at each budget, and the gap is largest at the smallest budget.",
        measured={
            "mrmc_accuracy": {f"{b:.2f}": round(_mean(mrmc[b]), 4) for b in params.budgets},
            "random_accuracy": {f"{b:.2f}": round(_mean(random[b]), 4) for b in params.budgets},
            "gap": {f"{b:.2f}": round(_mean(gaps[b]), 4) for b in params.budgets},
            "seeds": len(gaps[smallest]),
        },
        criterion=(
            "per budget b, the t interval over seeds of the paired gap acc_mrmc(b) − acc_random(b) lies above 0, "
            "and for every other budget b the interval of gap(min budget) − gap(b) lies above 0"
        ),
        evidence=evidence,
    )


def scoring_seconds(select_timings: dict) -> dict[str, dict[str, float]]:
    """Per method and seed: the mean over budgets of the median of the repeated timings of each selection."""
    per_call: dict[tuple[str, str], list[float]] = {}
    for entry in select_timings["repeated_seconds"]:
        per_call.setdefault((entry["method"], str(entry["seed"])), []).append(
            float(np.median(entry["seconds"]))
        )
    scoring: dict[str, dict[str, float]] = {}
    for (method, seed), medians in sorted(per_call.items()):
        scoring.setdefault(method, {})[seed] = float(np.mean(medians))
    return scoring


def selection_seconds(
    scoring: dict[str, dict[str, float]], trace_seconds: dict[str, float], methods: dict
) -> dict[str, dict[str, float]]:
    """Selection cost per method and seed: its scoring time, plus that seed's trace for methods that need one."""
    return {
        method: {
            seed: seconds
            + (trace_seconds[seed] if SELECTORS.get(methods[method].selector).needs_trace else 0.0)
            for seed, seconds in per_seed.items()
        }
        for method, per_seed in scoring.items()
    }


def train_seconds(train_timings: dict, method: str, budget: float) -> dict[str, float]:
    """Training seconds per seed of one (method, budget) (one timing per seed)."""
    return {
        str(entry["seed"]): float(entry["seconds"])
        for entry in train_timings["train_seconds"]
        if entry["method"] == method and entry["budget"] == budget
    }


def cost_claim(params: MRMCParams, trace_timings: dict, select_timings: dict, train_timings: dict) -> Claim:
    """MRMC's selection cost is within the ratio of the cheapest score-based baseline, and its total is
    below full-data training at the cost budget (per seed, t interval over seeds)."""
    names, confidence = params.claims, params.claims.confidence
    trace = {str(seed): float(value) for seed, value in trace_timings["trace_seconds"].items()}
    scoring = scoring_seconds(select_timings)
    costs = selection_seconds(scoring, trace, params.methods)
    cheapest = min(names.score_baselines, key=lambda method: float(np.median(list(costs[method].values()))))
    mrmc = costs[names.mrmc_method]
    ratio = {seed: mrmc[seed] / costs[cheapest][seed] for seed in mrmc}
    full = train_seconds(train_timings, FULL, 1.0)
    core = train_seconds(train_timings, names.mrmc_method, names.cost_budget)
    total = {seed: mrmc[seed] + core[seed] for seed in mrmc}
    repeats = select_timings.get("repeats", 1)
    evidence = [
        compare(
            f"selection seconds MRMC / {cheapest}",
            ratio,
            names.selection_time_ratio,
            "below",
            confidence,
            note=f"selection = trace + median of {repeats} interleaved repeats of each scoring call",
        ),
        compare_paired(
            f"full training − (MRMC selection + training at {_pct(names.cost_budget)}), seconds",
            full,
            total,
            0.0,
            "above",
            confidence,
            note="one trace and one training timing per seed",
        ),
    ]
    for item in evidence:
        item.median = float(np.median(list(item.per_seed.values())))
    scoring_ratio = float(np.median(list(scoring[names.mrmc_method].values()))) / float(
        np.median(list(scoring[cheapest].values()))
    )
    return verdict_claim(
        id="selection_cost",
        statement=f"MRMC selects within {names.selection_time_ratio}× the time of the cheapest score-based baseline, "
        f"and selection + training at {names.cost_budget:.0%} costs less than full-data training.",
        measured={
            "trace_seconds": {seed: round(value, 3) for seed, value in sorted(trace.items())},
            "selection_seconds_median": {
                method: round(float(np.median(list(values.values()))), 4)
                for method, values in sorted(costs.items())
            },
            "scoring_only_seconds_median": {
                method: round(float(np.median(list(values.values()))), 6)
                for method, values in sorted(scoring.items())
            },
            "mrmc_to_cheapest_scoring_ratio": round(scoring_ratio, 4),
            "cheapest_baseline": cheapest,
            "timing_repeats": repeats,
            "mrmc_total_seconds_median": round(float(np.median(list(total.values()))), 3),
            "full_training_seconds_median": round(float(np.median(list(full.values()))), 3),
        },
        criterion=(
            f"per seed: selection(mrmc)/selection({cheapest}) with a t interval over seeds wholly below "
            f"{names.selection_time_ratio}, and train(full) − [selection(mrmc) + train(mrmc @ {names.cost_budget})] "
            "with its interval wholly above 0; selection seconds are medians of interleaved repeats and include "
            "the trace for every trace-based method"
        ),
        evidence=evidence,
    )


def class_count_ratios(
    selections: pl.DataFrame, pool_labels: pl.DataFrame, method: str, budget: float
) -> dict[str, float]:
    """Per seed: largest class count / smallest class count (floored at 1) in the core-set."""
    labelled = selections.filter((pl.col("method") == method) & (pl.col("budget") == budget)).join(
        pool_labels, on="sample_id"
    )
    n_classes = pool_labels["label"].n_unique()
    ratios = {}
    for (seed,), rows in sorted(labelled.group_by(["seed"]), key=lambda item: item[0]):
        counts = rows["label"].value_counts()["count"].to_numpy()
        smallest = counts.min() if len(counts) == n_classes else 0
        ratios[str(seed)] = float(counts.max() / max(smallest, 1))
    return ratios


def class_count_ratio(
    selections: pl.DataFrame, pool_labels: pl.DataFrame, method: str, budget: float
) -> float:
    """Mean over seeds of :func:`class_count_ratios`."""
    return _mean(class_count_ratios(selections, pool_labels, method, budget))


def balance_claim(
    results: pl.DataFrame, selections: pl.DataFrame, pool: pl.DataFrame, params: MRMCParams
) -> Claim:
    """Without the balance constraint class counts are uneven and accuracy at the smallest budget drops."""
    names, confidence = params.claims, params.claims.confidence
    budget = min(params.budgets)
    labels = pool.select("sample_id", "label")
    unbalanced_ratio = class_count_ratios(selections, labels, names.unbalanced_method, budget)
    balanced_ratio = class_count_ratios(selections, labels, names.mrmc_method, budget)
    balanced = accuracy_per_seed(results, names.mrmc_method, budget)
    unbalanced = accuracy_per_seed(results, names.unbalanced_method, budget)
    evidence = [
        compare(
            f"max/min class count without balance at {_pct(budget)}",
            unbalanced_ratio,
            names.uneven_ratio,
            "above",
            confidence,
        ),
        compare_paired(
            f"balanced − unbalanced accuracy at {_pct(budget)}",
            balanced,
            unbalanced,
            0.0,
            "above",
            confidence,
        ),
    ]
    return verdict_claim(
        id="balance_matters",
        statement="Without the balance constraint, core-set class counts are uneven and accuracy at the smallest "
        "budget drops.",
        measured={
            "budget": budget,
            "class_count_ratio_unbalanced": round(_mean(unbalanced_ratio), 3),
            "class_count_ratio_balanced": round(_mean(balanced_ratio), 3),
            "accuracy_balanced": round(_mean(balanced), 4),
            "accuracy_unbalanced": round(_mean(unbalanced), 4),
            "accuracy_drop": round(_mean(balanced) - _mean(unbalanced), 4),
        },
        criterion=f"at the smallest budget: the t interval over seeds of max/min class count without balance wholly "
        f"above {names.uneven_ratio}, and of the paired acc(balanced) − acc(unbalanced) wholly above 0",
        evidence=evidence,
    )


def run(ctx: StepContext) -> None:
    """Compute the three claims and write `claims.json`."""
    params: MRMCParams = ctx.params
    results = read_parquet(ctx.input("results"))
    claims = [
        accuracy_claim(results, params),
        cost_claim(
            params,
            read_json(ctx.input("trace_timings")),
            read_json(ctx.input("select_timings")),
            read_json(ctx.input("train_timings")),
        ),
        balance_claim(
            results, read_parquet(ctx.input("selections")), read_parquet(ctx.input("pool")), params
        ),
    ]
    for claim in claims:
        ctx.log(f"{claim.id}: {claim.verdict}: {claim.reason}")
    write_claims(claims, ctx.output("claims"))
