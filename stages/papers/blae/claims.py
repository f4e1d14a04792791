"""Step `blae-claims`: the card's claims and the regime claim, three-way verdicts over seeds.

- `batch_bound`: BLAE uses ≤ ⌈log₂log₂T⌉ + 2 batches in every run. A bound on every run, judged by the
  observed-range rule (`compare_every`): it holds if no run exceeds the bound and fails if one does
  (deterministic counts: no seed noise can rescue a run over the bound). BLAE's static batch grid has at most
  ⌈log₂log₂T⌉ + 1 batches by construction, so this checks that the implementation keeps the paper's
  schedule; only an implementation error can make it fail.
- `outperforms`: BLAE's final regret is below every batched baseline's in every cell run (paired by seed,
  t interval of the mean difference wholly below 0); the ratio to the best baseline is reported. Every
  algorithm plays each instance with its arms in a random order, and E4's and PhaElimD's last phase shares the
  remaining pulls by its design (`final_phase: spread`), so E4's regret no longer measures the arms' order and
  the comparisons with it are judged. With `final_phase: cut` (the authors' code) they are `inconclusive` by
  design, as before.
- `large_k_regime`: in the cells with K > e^d, BLAE's final regret is below that of the baselines whose bounds
  carry √log K (`claims.log_k_baselines`: E4, PhaElimD), paired by seed; no such cell → inconclusive.

The card's third claim, `low_overhead` (wall time), is judged by the benchmark step `blae-timing` into
`timings/claims.json`, so nothing here reads a wall-clock time and `claims.json` is byte-identical on rerun.
"""

from __future__ import annotations

import math

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


def e4_cut(params: BLAEParams) -> bool:
    """Whether the reference (E4) runs with the code's `final_phase: cut` (then its regret measures arm order)."""
    entry = params.algorithms.get(params.claims.reference)
    return entry is not None and entry.options.get("final_phase", "spread") == "cut"


def e4_quirk(params: BLAEParams) -> str:
    """Why a comparison with E4 run with `final_phase: cut` is inconclusive by design."""
    entry = params.algorithms.get(params.claims.reference)
    gamma = entry.options.get("gamma", 10.0) if entry is not None else 10.0
    return (
        f"with γ = {gamma:g}, (log T)^(1+γ) exceeds T, and with `final_phase: cut` E4's last phase is cut at T "
        "after pulls laid out arm by arm in index order; it then plays the lowest-indexed arms of its design, and "
        "its regret measures the arms' order, not the algorithm"
    )


def paired_regret(
    runs: pl.DataFrame, params: BLAEParams, cells: list[str], baselines: set[str] | None = None
):
    """Per cell and batched baseline: the paired BLAE − baseline evidence, the ratio to the best baseline and
    the labels configured but not run in the cell (each an undecided part)."""
    names = params.claims
    excluded = {names.method, *names.unbatched}
    evidence, ratios, skipped = [], {}, {}
    for cell in cells:
        present = sorted(set(runs.filter(pl.col("cell") == cell)["algorithm"]))
        wanted = [label for label in params.algorithms if label not in excluded]
        if baselines is not None:
            wanted = [label for label in wanted if label in baselines]
        run_here = [label for label in wanted if label in present]
        skipped[cell] = sorted(set(wanted) - set(present))
        ours = per_seed(runs, cell, names.method, "final_regret")
        means = {
            label: np.mean(list(per_seed(runs, cell, label, "final_regret").values())) for label in run_here
        }
        if means:
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
            for label in run_here
        ]
        evidence += [  # a baseline left out of a cell leaves that comparison undecided, not won
            undecided(
                f"{names.method} − {label} final regret in {cell}",
                f"{label} was not run in this cell, so the comparison is missing",
            )
            for label in skipped[cell]
        ]
    return evidence, ratios, skipped


def regret_claim(runs: pl.DataFrame, params: BLAEParams) -> Claim:
    names = params.claims
    excluded = {names.method, *names.unbatched}
    evidence, ratios, skipped = paired_regret(runs, params, sorted(runs["cell"].unique()))
    others = " or ".join(sorted(set(params.algorithms) - excluded)) or "a baseline"
    verdict, reason = decide(evidence)
    criterion = (
        "per cell and batched baseline, the t interval over seeds of the paired difference of final regret "
        f"({names.method} − baseline) lies wholly below 0; unbatched references ({', '.join(names.unbatched)}) are "
        "reported, not judged; a baseline not run in a cell leaves its comparison undecided. Every algorithm plays "
        "the same instance per (cell, seed) with its arms in a random order, and a phase that asks for more pulls "
        "than are left shares them by its design (`final_phase: spread`)"
    )
    could_hold = (
        f"{names.method}'s final regret is below that of {others} on the same instances in every cell, beyond the "
        "seed noise."
    )
    could_fail = (
        f"In some cell {others} has lower final regret than {names.method} on the same instances beyond the "
        "seed noise."
    )
    if e4_cut(params):  # the code's quirk switched back on: E4's regret measures arm order
        against_e4 = [
            item for item in evidence if item.name.split(" − ")[1].startswith(f"{names.reference} ")
        ]
        verdict, reason = decide([item for item in evidence if item not in against_e4])
        measured_e4 = [item for item in against_e4 if item.per_seed]
        for item in measured_e4:
            item.note = "; ".join(filter(None, [item.note, f"inconclusive by design: {e4_quirk(params)}"]))
            item.verdict = "inconclusive"
        if against_e4 and verdict != "fails":
            verdict = combine([verdict, "inconclusive"])
            cells = ", ".join(item.name.rsplit(" in ", 1)[1] for item in measured_e4) or "no cell (not run)"
            reason = (
                f"Undecided by design against {names.reference}, measured in {cells} ({e4_quirk(params)}). "
                f"Against the other batched baselines: {reason}"
            )
        criterion += (
            f"; with `final_phase: cut` the comparisons with {names.reference} are inconclusive by design"
        )
        could_hold = f"It cannot hold while {names.reference} runs with `final_phase: cut`. " + could_hold
    return verdict_claim(
        id="outperforms",
        statement="BLAE consistently outperforms the batched baselines: its mean final regret is below every "
        "baseline's in every cell (Fig. 1).",
        measured={"ratio_to_best_baseline": ratios, "not_run": {c: s for c, s in skipped.items() if s}},
        criterion=criterion,
        evidence=evidence,
        could_hold=could_hold,
        could_fail=could_fail,
        unit="seed",
        n=units_of([item for item in evidence if item.per_seed]),  # a baseline not run has no units
        verdict=verdict,
        reason=reason,
    )


def large_k_cells(runs: pl.DataFrame) -> list[str]:
    """Cells in the paper's large-K regime, K > e^d."""
    cells = runs.select("cell", "n_arms", "dim").unique().sort("cell")
    return [row["cell"] for row in cells.iter_rows(named=True) if row["n_arms"] > math.exp(row["dim"])]


def regime_claim(runs: pl.DataFrame, params: BLAEParams) -> Claim:
    """The large-K regime (K > e^d): BLAE's bound is d√T there, E4's and PhaElimD's carry √log(KT)."""
    names = params.claims
    cells = large_k_cells(runs)
    baselines = set(names.log_k_baselines)
    evidence, ratios, skipped = paired_regret(runs, params, cells, baselines)
    if not cells:
        evidence = [
            undecided(
                f"{names.method} − baselines in the large-K regime",
                "no cell has K > e^d, so the regime the claim is about was not run",
            )
        ]
    verdict, reason = decide(evidence)
    labels = ", ".join(sorted(baselines))
    return verdict_claim(
        id="large_k_regime",
        statement="BLAE is minimax optimal in the large-K regime (K ≥ Ω(e^d)), where its regret bound is "
        "Õ(d√T) and E4's is Õ(√(dT log(KT))) (Table 1, Theorem 1).",
        measured={
            "cells": cells,
            "k_over_e_d": {
                row["cell"]: round(row["n_arms"] / math.exp(row["dim"]), 3)
                for row in runs.select("cell", "n_arms", "dim").unique().sort("cell").iter_rows(named=True)
                if row["cell"] in cells
            },
            "ratio_to_best_baseline": ratios,
            "not_run": {c: s for c, s in skipped.items() if s},
        },
        criterion=f"in every cell with K > e^d, the t interval over seeds of the paired final-regret difference "
        f"{names.method} − baseline lies wholly below 0 for each baseline whose bound carries √log K ({labels}); "
        f"{names.method}'s width uses L = min(log(2KT), d + log(2T)), the paper's large-K term",
        evidence=evidence,
        could_hold=f"In the large-K cells {names.method}'s final regret is below {labels}'s on the same instances "
        "beyond the seed noise.",
        could_fail=f"In a large-K cell {labels} has lower final regret than {names.method} beyond the seed noise "
        "(E4 now spreads its last phase by its design, so it can win).",
        unit="seed",
        n=units_of([item for item in evidence if item.per_seed]),
        verdict=verdict,
        reason=reason,
    )


def run(ctx: StepContext) -> None:
    params: BLAEParams = ctx.params
    runs = read_parquet(ctx.input("runs"))
    claims = [
        batch_claim(runs, read_parquet(ctx.input("horizons")), params),
        regret_claim(runs, params),
        regime_claim(runs, params),
    ]
    for claim in claims:
        ctx.log(f"{claim.id}: {claim.verdict}: {claim.reason}")
    write_claims(claims, ctx.output("claims"))
    write_headline(claims, ctx.output("headline"))
