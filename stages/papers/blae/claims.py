"""Step `blae-claims`: the card's three claims, three-way verdicts over seeds.

- `batch_bound`: BLAE uses ≤ ⌈log₂log₂T⌉ + 2 batches in every run. A bound on every run, judged by the
  observed-range rule (`compare_every`): it holds if no run exceeds the bound and fails if one does
  (deterministic counts: no seed noise can rescue a run over the bound). BLAE's static batch grid has at most
  ⌈log₂log₂T⌉ + 1 batches by construction, so this checks that the implementation keeps the paper's
  schedule; only an implementation error can make it fail.
- `outperforms`: BLAE's final regret is below every batched baseline's in every cell run (paired by seed,
  t interval of the mean difference wholly below 0); the ratio to the best baseline is reported. The
  comparisons with E4 are `inconclusive` by design: with the code's γ = 10, (log T)^{1+γ} exceeds T, so when
  E4's stopping test does not fire its last phase is cut at T after the pulls laid out arm by arm in index
  order — it plays the lowest-indexed arms of its design, and its regret measures the arms' order, not the
  algorithm. The other batched baselines are judged as before.

The card's third claim, `low_overhead` (wall time), is judged by the benchmark step `blae-timing` into
`timings/claims.json`, so nothing here reads a wall-clock time and `claims.json` is byte-identical on rerun.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.claims import (
    Claim,
    Evidence,
    combine,
    compare_every,
    compare_paired,
    decide,
    units_of,
    verdict_claim,
    write_claims,
)
from stages.core.context import StepContext
from stages.core.headline import write_headline
from stages.core.io import read_parquet
from stages.methods.bandits.blae import batch_bound
from stages.papers.blae.params import BLAEParams


def per_seed(frame: pl.DataFrame, cell: str, algorithm: str, column: str) -> dict[str, float]:
    rows = frame.filter((pl.col("cell") == cell) & (pl.col("algorithm") == algorithm)).sort("seed")
    return {str(seed): float(value) for seed, value in zip(rows["seed"], rows[column], strict=True)}


def range_evidence(name: str, values: dict[str, float], bound: int) -> Evidence:
    """A bound on every run (the observed-range rule): holds if no run exceeds it, fails if one does (a single
    run over the bound refutes "every run"; batch counts are deterministic, so no noise allowance)."""
    return compare_every(
        name,
        values,
        bound + 0.5,
        "below",
        note=f"integer counts: ≤ {bound} ⟺ < {bound + 0.5}; judged on the largest run",
        unit="seeds",
    )


def undecided(name: str, note: str) -> Evidence:
    """A comparison that cannot be made (a baseline not run in a cell): no values, verdict `inconclusive`."""
    return Evidence(name=name, threshold=0.0, direction="below", verdict="inconclusive", note=note)


def horizon_evidence(horizons: pl.DataFrame, method: str) -> list[Evidence]:
    """The bound at each horizon of the batches-vs-T runs."""
    evidence = []
    for horizon in sorted(horizons["horizon"].unique()):
        rows = horizons.filter((pl.col("algorithm") == method) & (pl.col("horizon") == horizon)).sort("seed")
        values = {str(seed): float(value) for seed, value in zip(rows["seed"], rows["batches"], strict=True)}
        evidence.append(
            range_evidence(f"{method} batches at T = {horizon}", values, batch_bound(int(horizon)))
        )
    return evidence


def batch_claim(runs: pl.DataFrame, horizons: pl.DataFrame, params: BLAEParams) -> Claim:
    horizon = params.grid.horizon
    bound = batch_bound(horizon)
    method = params.claims.method
    cells = sorted(runs["cell"].unique())
    evidence = [
        range_evidence(f"{method} batches in {cell}", per_seed(runs, cell, method, "batches"), bound)
        for cell in cells
    ]
    evidence += horizon_evidence(horizons, method)
    at_horizons = (
        horizons.group_by("algorithm", "horizon").agg(pl.col("batches").max()).sort("algorithm", "horizon")
    )
    counts = runs.group_by("cell", "algorithm").agg(
        pl.col("batches").min().alias("min"), pl.col("batches").max().alias("max")
    )
    return verdict_claim(
        id="batch_bound",
        statement=f"BLAE uses at most ⌈log₂log₂T⌉ + 2 = {bound} batches (T = {horizon}) in every run.",
        measured={
            "horizon": horizon,
            "bound": bound,
            "batches_min_max": {
                f"{row['cell']}/{row['algorithm']}": [row["min"], row["max"]]
                for row in counts.sort("cell", "algorithm").iter_rows(named=True)
            },
            "max_batches_by_horizon": {
                f"{row['algorithm']}/T={row['horizon']}": {
                    "max": row["batches"],
                    "bound": batch_bound(int(row["horizon"])),
                }
                for row in at_horizons.iter_rows(named=True)
            },
        },
        criterion=f"in every cell (T = {horizon}) and at every horizon of the batches-vs-T runs, the largest batch "
        f"count over seeds of {method} is ≤ ⌈log₂log₂T⌉ + 2 (observed range over seeds: every run must clear)",
        evidence=evidence,
        could_hold=f"Every run of {method}, in every cell and at every horizon, ends within the bound: its static "
        "grid ⌈T^(1−2^(−ℓ))⌉ has at most ⌈log₂log₂T⌉ + 1 batches by construction, so a `holds` confirms that the "
        "implementation keeps the paper's schedule rather than an empirical property.",
        could_fail="A single run with more batches than the bound (an early stop or an elimination that adds a "
        "batch outside the schedule, i.e. an implementation error) fails it; by construction of the grid no "
        "correct run can.",
        unit="seed",
    )


def e4_quirk(params: BLAEParams) -> str:
    """Why a comparison with E4 is inconclusive by design."""
    entry = params.algorithms.get(params.claims.reference)
    gamma = entry.options.get("gamma", 10.0) if entry is not None else 10.0
    return (
        f"with γ = {gamma:g}, (log T)^(1+γ) exceeds T, so when E4's stopping test does not fire its "
        "last phase is cut at T after pulls laid out arm by arm in index order; it then plays the lowest-indexed "
        "arms of its design, and its regret measures the arms' order, not the algorithm"
    )


def regret_claim(runs: pl.DataFrame, params: BLAEParams) -> Claim:
    names = params.claims
    excluded = {names.method, *names.unbatched}
    evidence, ratios, skipped = [], {}, {}
    for cell in sorted(runs["cell"].unique()):
        present = sorted(set(runs.filter(pl.col("cell") == cell)["algorithm"]))
        baselines = [label for label in present if label not in excluded]
        skipped[cell] = sorted(set(params.algorithms) - set(present))
        ours = per_seed(runs, cell, names.method, "final_regret")
        means = {
            label: np.mean(list(per_seed(runs, cell, label, "final_regret").values())) for label in baselines
        }
        best = min(means, key=means.get)
        ratios[cell] = {
            "best_baseline": best,
            "ratio": round(float(np.mean(list(ours.values())) / means[best]), 4),
        }
        evidence += [
            compare_paired(
                f"{names.method} − {label} final regret in {cell}",
                ours,
                per_seed(runs, cell, label, "final_regret"),
                0.0,
                "below",
                names.confidence,
            )
            for label in baselines
        ]
        evidence += [  # a baseline left out of a cell leaves that comparison undecided, not won
            undecided(
                f"{names.method} − {label} final regret in {cell}",
                f"{label} was not run in this cell, so the comparison is missing",
            )
            for label in skipped[cell]
            if label not in excluded
        ]
    against_e4 = [item for item in evidence if item.name.split(" − ")[1].startswith(f"{names.reference} ")]
    judged = [item for item in evidence if item not in against_e4]
    verdict, reason = decide(judged)
    measured_e4 = [item for item in against_e4 if item.per_seed]
    others = " or ".join(sorted(set(params.algorithms) - excluded - {names.reference})) or "another baseline"
    for item in measured_e4:
        item.note = "; ".join(filter(None, [item.note, f"inconclusive by design: {e4_quirk(params)}"]))
        item.verdict = "inconclusive"
    if against_e4 and verdict != "fails":
        verdict = combine([verdict, "inconclusive"])
        cells = ", ".join(item.name.rsplit(" in ", 1)[1] for item in measured_e4) or "no cell (not run)"
        reason = (
            f"Undecided by design against {names.reference}, measured in {cells} ({e4_quirk(params)}). Against "
            f"the other batched baselines: {reason}"
        )
    return verdict_claim(
        id="outperforms",
        statement="BLAE consistently outperforms the batched baselines: its mean final regret is below every "
        "baseline's in every cell (Fig. 1).",
        measured={"ratio_to_best_baseline": ratios, "not_run": {c: s for c, s in skipped.items() if s}},
        criterion="per cell and batched baseline, the t interval over seeds of the paired difference of final "
        f"regret ({names.method} − baseline) lies wholly below 0; unbatched references ({', '.join(names.unbatched)}) "
        f"are reported, not judged; a baseline not run in a cell leaves its comparison undecided; the "
        f"comparisons with {names.reference} are inconclusive by design (its last phase plays arms in index order)",
        evidence=evidence,
        could_hold=f"It cannot hold while {names.reference} is among the batched baselines (those comparisons are "
        f"inconclusive by design); each comparison with {others} holds when {names.method}'s final regret is "
        "below theirs on the same instances beyond the seed noise, and is reported.",
        could_fail=f"In some cell {others} has lower final regret than {names.method} on the same instances "
        f"beyond the seed noise ({names.reference} cannot make it fail: its regret depends on the arms' order).",
        unit="seed",
        n=units_of([item for item in evidence if item.per_seed]),  # a baseline not run has no units
        verdict=verdict,
        reason=reason,
    )


def run(ctx: StepContext) -> None:
    params: BLAEParams = ctx.params
    runs = read_parquet(ctx.input("runs"))
    claims = [
        batch_claim(runs, read_parquet(ctx.input("horizons")), params),
        regret_claim(runs, params),
    ]
    for claim in claims:
        ctx.log(f"{claim.id}: {claim.verdict}: {claim.reason}")
    write_claims(claims, ctx.output("claims"))
    write_headline(claims, ctx.output("headline"))
