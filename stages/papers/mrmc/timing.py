"""Step `mrmc-timing`, a benchmark step: the paper's selection-cost claim from `mrmc-cost`'s timings.

Timings are per-seed medians of the interleaved repeats of `mrmc-cost`, all measured in one run. Wall-clock
seconds differ on every run, so this step reads and writes only `timings/` files, and no data output reads
them: `claims.json` stays byte-identical on rerun, and this claim goes to `timings/claims.json` (gathered by
the `report-timings` stage).
"""

from __future__ import annotations

import numpy as np

from stages.core.claims import Claim, compare, verdict_claim, write_claims
from stages.core.context import StepContext
from stages.core.io import read_json
from stages.papers.mrmc.params import MRMCParams


def _pct(budget: float) -> str:
    return f"{budget:.0%}"


def seed_medians(cost_timings: dict) -> dict[str, dict[str, float]]:
    """Per timed call and seed: the median of its interleaved repeats."""
    medians: dict[str, dict[str, float]] = {}
    for seed, calls in cost_timings["seconds"].items():
        for name, values in calls.items():
            medians.setdefault(name, {})[seed] = float(np.median(values))
    return medians


def _median(values: dict[str, float]) -> float:
    return float(np.median(list(values.values())))


def cost_claim(params: MRMCParams, cost_timings: dict) -> Claim:
    """MRMC's selection cost is within the ratio of the cheapest score-based baseline, and selection + training
    at the cost budget is below full-data training (per-seed medians, t interval over seeds)."""
    names, confidence = params.claims, params.claims.confidence
    medians = seed_medians(cost_timings)
    rounds, epochs = cost_timings["trace_epochs"], cost_timings["train_epochs"]
    trace = {seed: rounds * value for seed, value in medians["trace_epoch"].items()}
    selection = {
        method: {seed: trace[seed] + value for seed, value in medians[f"score:{method}"].items()}
        for method in [names.mrmc_method, *names.score_baselines]
    }
    cheapest = min(names.score_baselines, key=lambda method: _median(selection[method]))
    mrmc = selection[names.mrmc_method]
    ratio = {seed: mrmc[seed] / selection[cheapest][seed] for seed in mrmc}

    def saving(train_epochs: int) -> dict[str, float]:
        return {
            seed: train_epochs * medians["full_epoch"][seed]
            - (mrmc[seed] + train_epochs * medians["core_epoch"][seed])
            for seed in mrmc
        }

    repeats = cost_timings["repeats"]
    evidence = [
        compare(
            f"selection seconds MRMC / {cheapest}",
            ratio,
            names.selection_time_ratio,
            "below",
            confidence,
            note=f"selection = {rounds} trace epochs + scoring; medians of {repeats} interleaved repeats per seed",
        ),
        compare(
            f"full training − (MRMC selection + training at {_pct(names.cost_budget)}), seconds",
            saving(epochs),
            0.0,
            "above",
            confidence,
            note=f"{epochs} training epochs × per-epoch medians of {repeats} interleaved repeats, one run",
        ),
    ]
    for item in evidence:
        item.median = _median(item.per_seed)
    paper_epochs = cost_timings["paper_train_epochs"]
    return verdict_claim(
        id="selection_cost",
        statement=f"MRMC selects within {names.selection_time_ratio}× the time of the cheapest score-based baseline, "
        f"and selection + training at {names.cost_budget:.0%} costs less than full-data training.",
        measured={
            "trace_epoch_seconds_median": round(_median(medians["trace_epoch"]), 4),
            "full_epoch_seconds_median": round(_median(medians["full_epoch"]), 4),
            "core_epoch_seconds_median": round(_median(medians["core_epoch"]), 4),
            "scoring_only_seconds_median": {
                method: round(_median(medians[f"score:{method}"]), 6)
                for method in [names.mrmc_method, *names.score_baselines]
            },
            "cheapest_baseline": cheapest,
            "timing_repeats": repeats,
            "trace_epochs": rounds,
            "train_epochs": epochs,
            f"saving_at_paper_{paper_epochs}_epochs_seconds_median": round(_median(saving(paper_epochs)), 3),
        },
        criterion=(
            f"per seed (medians of interleaved repeats measured in one run): selection(mrmc)/selection({cheapest}) "
            f"with its t interval over seeds wholly below {names.selection_time_ratio}, and "
            f"E·full_epoch − [selection(mrmc) + E·core_epoch(mrmc @ {names.cost_budget})] with E = train.epochs "
            "wholly above 0; selection includes the R-epoch trace for every trace-based method"
        ),
        evidence=evidence,
    )


def run(ctx: StepContext) -> None:
    """Judge the cost claim and write `timings/claims.json`."""
    claim = cost_claim(ctx.params, read_json(ctx.input("cost_timings")))
    ctx.log(f"{claim.id}: {claim.verdict}: {claim.reason}")
    write_claims([claim], ctx.output("claims"))
