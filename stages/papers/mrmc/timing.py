"""Step `mrmc-timing`, a benchmark step: the paper's selection-cost claim from `mrmc-cost`'s timings.

The paper claims MRMC's selection is cheap relative to training: it reads the losses of R = 20 trace epochs
and trains the core-set model for 200. Two ratios per seed, from the medians of `mrmc-cost`'s interleaved
repeats (all measured in one run), each judged on the log scale (`compare_ratio`: t interval over seeds of the
mean log-ratio, reported as the geometric mean):

- at equal epochs: MRMC's selection (R trace epochs with their evaluation passes + scoring) against training the
  same model with the same recipe on the whole pool for the same R epochs (`trace_train_epoch`), below
  `selection_overhead_ratio` (1.5): the selection costs about the short training it observes, not more;
- at the paper's epoch ratio: selection + E_p core-set epochs at the cost budget (30 %) against E_p full-data
  epochs, below `total_cost_ratio` (1), with E_p = R × 200 / 20 (the paper trains 10 epochs per trace epoch).

The core-set training of `mrmc-train` uses fewer epochs than E_p (a CPU budget); per-epoch medians project
both sides to E_p alike, and the ratio at `train.epochs` is recorded beside it. Wall-clock seconds differ on
every run, so this step reads and writes only `timings/` files, and no data output reads them: `claims.json`
stays byte-identical on rerun, and this claim goes to `timings/claims.json` (gathered by `report-timings`).
"""

from __future__ import annotations

import numpy as np

from stages.core.claims import Claim, compare_ratio, verdict_claim, write_claims
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


def paper_scale_epochs(cost_timings: dict) -> int:
    """E_p: core-set epochs at the paper's ratio to the trace (R × 200 / 20)."""
    ratio = cost_timings["paper_train_epochs"] / cost_timings["paper_trace_epochs"]
    return max(1, round(cost_timings["trace_epochs"] * ratio))


def selection_seconds(
    medians: dict[str, dict[str, float]], method: str, trace_epochs: int
) -> dict[str, float]:
    """Per seed: R trace epochs (training + evaluation pass) plus the method's scoring call."""
    return {
        seed: trace_epochs * medians["trace_epoch"][seed] + value
        for seed, value in medians[f"score:{method}"].items()
    }


def total_ratio(medians: dict, selection: dict[str, float], epochs: int) -> dict[str, float]:
    """Per seed: (selection + `epochs` core-set epochs) / (`epochs` full-data epochs)."""
    return {
        seed: (selection[seed] + epochs * medians["core_epoch"][seed])
        / (epochs * medians["full_epoch"][seed])
        for seed in selection
    }


def cost_claim(params: MRMCParams, cost_timings: dict) -> Claim:
    """MRMC's selection costs at most `selection_overhead_ratio` × the same-epoch training it observes, and
    selection + core-set training at the paper's epoch ratio costs less than full-data training (both ratios on
    the log scale over seeds; per-seed medians of interleaved repeats)."""
    names, confidence = params.claims, params.claims.confidence
    medians = seed_medians(cost_timings)
    rounds, repeats = cost_timings["trace_epochs"], cost_timings["repeats"]
    paper_epochs = paper_scale_epochs(cost_timings)
    selection = selection_seconds(medians, names.mrmc_method, rounds)
    equal = {seed: selection[seed] / (rounds * medians["trace_train_epoch"][seed]) for seed in selection}
    budget = _pct(names.cost_budget)
    evidence = [
        compare_ratio(
            f"MRMC selection / {rounds} training epochs of the trace model",
            equal,
            names.selection_overhead_ratio,
            "below",
            confidence,
            note=f"selection = {rounds} trace epochs (each with its evaluation pass) + scoring; medians of {repeats} "
            "interleaved repeats per seed",
            unit="seeds",
        ),
        compare_ratio(
            f"(MRMC selection + {paper_epochs} epochs at {budget}) / {paper_epochs} full-data epochs",
            total_ratio(medians, selection, paper_epochs),
            names.total_cost_ratio,
            "below",
            confidence,
            note=f"E_p = {rounds} × {cost_timings['paper_train_epochs']}/{cost_timings['paper_trace_epochs']} "
            f"(the paper's epochs per trace epoch); per-epoch medians of {repeats} interleaved repeats",
            unit="seeds",
        ),
    ]
    for item in evidence:
        item.median = _median(item.per_seed)
    train_epochs = cost_timings["train_epochs"]
    scored = [names.mrmc_method, *names.score_baselines]
    return verdict_claim(
        id="selection_cost",
        statement="MRMC's selection cost is low relative to training: about the cost of training the same model "
        f"for the R trace epochs it observes, and selection + core-set training at {budget} costs less than "
        "full-data training at the paper's 200 training epochs per 20 trace epochs.",
        measured={
            "trace_epoch_seconds_median": round(_median(medians["trace_epoch"]), 4),
            "trace_train_epoch_seconds_median": round(_median(medians["trace_train_epoch"]), 4),
            "full_epoch_seconds_median": round(_median(medians["full_epoch"]), 4),
            "core_epoch_seconds_median": round(_median(medians["core_epoch"]), 4),
            "scoring_only_seconds_median": {
                method: round(_median(medians[f"score:{method}"]), 6) for method in scored
            },
            "timing_repeats": repeats,
            "trace_epochs": rounds,
            "paper_scale_train_epochs": paper_epochs,
            "train_epochs": train_epochs,
            f"total_ratio_at_{train_epochs}_train_epochs_median": round(
                _median(total_ratio(medians, selection, train_epochs)), 4
            ),
        },
        criterion=(
            "per seed (medians of interleaved repeats measured in one run): selection(mrmc) / (R·trace_train_epoch) "
            f"with R = {rounds} wholly below {names.selection_overhead_ratio}, and [selection(mrmc) + "
            f"E_p·core_epoch(mrmc @ {budget})] / (E_p·full_epoch) with E_p = {paper_epochs} wholly below "
            f"{names.total_cost_ratio}; both t intervals over seeds of the mean log-ratio (geometric mean)"
        ),
        evidence=evidence,
        could_hold=f"The evaluation passes and MRMC-R's scoring (decay fit + logistic regression on C′) add less "
        f"than {names.selection_overhead_ratio - 1:.0%} to R epochs of training, and a {budget} core-set epoch "
        "costs about that share of a full-data epoch, so at the paper's 10 training epochs per trace epoch the "
        "saving outweighs the selection.",
        could_fail=f"The evaluation passes or the scoring make the selection cost more than "
        f"{names.selection_overhead_ratio}× the R training epochs, or per-batch overheads keep a {budget} core-set "
        "epoch near a full one, so selection + core-set training reaches the full training's cost.",
        unit="seed",
    )


def run(ctx: StepContext) -> None:
    """Judge the cost claim and write `timings/claims.json`."""
    claim = cost_claim(ctx.params, read_json(ctx.input("cost_timings")))
    ctx.log(f"{claim.id}: {claim.verdict}: {claim.reason}")
    write_claims([claim], ctx.output("claims"))
