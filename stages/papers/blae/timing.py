"""Step `blae-timing`, a benchmark step: the card's `low_overhead` claim from timed repeats of the runs.

BLAE's wall time ≤ E4's (paired t interval over seeds of the difference wholly below 0) and ≤ `runtime_ratio` ×
PhaElimD's (per-seed ratio judged on the log scale: t interval of the mean log-ratio, a geometric mean, wholly
below the bound). Every compared run of the grid (same instance, same noise stream as `blae-simulate`) is timed
`claims.timing_repeats` times, the algorithms of a (cell, seed) interleaved in a seeded random order, and each
run counts by its median. Wall-clock seconds differ on every run, so this step writes only `timings/` files,
which no data output reads: `claims.json` stays byte-identical, and this claim goes to `timings/claims.json`
(gathered by the `report-timings` stage) beside the per-repeat seconds (`timings/repeats.json`).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.claims import Claim, compare_paired, compare_ratio, verdict_claim, write_claims
from stages.core.context import StepContext
from stages.core.io import write_json
from stages.core.progress import progress
from stages.core.seeding import derive_seed
from stages.core.timing import interleaved_seconds
from stages.methods.bandits.registry import ALGORITHMS
from stages.papers.blae.claims import per_seed
from stages.papers.blae.params import BLAEParams
from stages.papers.blae.simulate import algorithms_for, instance


def timed_runs(params: BLAEParams, base_seed: int) -> list[dict]:
    """Per (cell, seed, compared algorithm): the seconds of each repeat of its whole run and their median."""
    names, grid = params.claims, params.grid
    compared = [names.method, names.reference, names.cheap_baseline]
    rows = []
    jobs = [(cell, seed) for cell in grid.cells for seed in grid.seeds]
    for cell, seed in progress(jobs, "blae timing"):
        bandit = instance(cell, seed, base_seed, params.noise_sd)
        labels = [label for label in algorithms_for(cell, grid, compared) if label in params.algorithms]

        def play(label: str, cell=cell, seed=seed, bandit=bandit):
            """One whole run, exactly as `blae-simulate` plays it (same instance, same noise stream)."""
            entry = params.algorithms[label]
            run_seed = derive_seed(base_seed, "blae", cell.label, seed, label)
            key = f"blae.algorithms.{label}.options"
            return lambda: ALGORITHMS.build(entry.algorithm, entry.options, key=key).run(
                bandit, grid.horizon, np.random.default_rng(run_seed)
            )

        seconds = interleaved_seconds(
            {label: play(label) for label in labels},
            repeats=names.timing_repeats,
            seed=derive_seed(base_seed, "blae-timing", cell.label, seed),
            warmup=False,
        )
        for label, values in seconds.items():
            key = {"cell": cell.label, "seed": seed, "algorithm": label}
            rows.append(
                {**key, "repeats": [round(v, 6) for v in values], "seconds": float(np.median(values))}
            )
    return rows


def runtime_claim(timings: dict, params: BLAEParams) -> Claim:
    """BLAE's wall time against E4's (paired by seed) and against PhaElimD's (per-seed ratio), per cell;
    `timings["runs"]` holds one row per (cell, seed, algorithm) with its `seconds` (a median of repeats)."""
    names = params.claims
    seconds = pl.DataFrame(timings["runs"])
    note = f"per run: median of {timings.get('repeats', 1)} interleaved repeats"
    evidence, medians = [], {}
    for cell in sorted(seconds["cell"].unique()):
        ours = per_seed(seconds, cell, names.method, "seconds")
        present = set(seconds.filter(pl.col("cell") == cell)["algorithm"])
        medians[cell] = {
            label: round(float(np.median(list(per_seed(seconds, cell, label, "seconds").values()))), 4)
            for label in sorted(present)
        }
        if names.reference in present:
            evidence.append(
                compare_paired(
                    f"{names.method} − {names.reference} seconds in {cell}",
                    ours,
                    per_seed(seconds, cell, names.reference, "seconds"),
                    0.0,
                    "below",
                    names.confidence,
                    note=note,
                )
            )
        cheap = per_seed(seconds, cell, names.cheap_baseline, "seconds")
        evidence.append(
            compare_ratio(
                f"{names.method} / {names.cheap_baseline} seconds in {cell}",
                {seed: ours[seed] / cheap[seed] for seed in ours},
                names.runtime_ratio,
                "below",
                names.confidence,
                note=note,
                unit="seeds",
            )
        )
    for item in evidence:
        item.median = float(np.median(list(item.per_seed.values())))
    horizon = params.grid.horizon
    return verdict_claim(
        id="low_overhead",
        statement=f"BLAE has low computational overhead: wall time ≤ E4's in every cell and ≤ "
        f"{names.runtime_ratio}× PhaElimD's (the bound is ours).",
        measured={"median_seconds": medians},
        criterion=f"per cell: t interval over seeds of the paired {names.method} − {names.reference} seconds wholly "
        f"below 0 (cells where E4 ran), and t interval of the mean log-ratio {names.method}/{names.cheap_baseline} "
        f"(geometric mean) wholly below {names.runtime_ratio}; each run's seconds are the median of interleaved "
        "repeats",
        evidence=evidence,
        could_hold=f"Over the same instances and noise streams at T = {horizon}, {names.method}'s whole run takes "
        f"less time than {names.reference}'s (whose track-and-stop SDP goes through cvxpy) in every cell where "
        f"{names.reference} runs, and at most {names.runtime_ratio}× {names.cheap_baseline}'s, beyond the seed "
        "noise.",
        could_fail=f"{names.method}'s regularised G-optimal designs (one Frank–Wolfe solve per batch on the active "
        f"set) cost more than {names.runtime_ratio}× {names.cheap_baseline}'s D-optimal phases, or more than "
        f"{names.reference}'s run, in some cell beyond the seed noise (all three use the same Frank–Wolfe design "
        "solver).",
        unit="seed",
    )


def run(ctx: StepContext) -> None:
    """Time the compared runs, judge the overhead claim, write `timings/repeats.json` and `timings/claims.json`."""
    params: BLAEParams = ctx.params
    timings = {"repeats": params.claims.timing_repeats, "runs": timed_runs(params, ctx.common.seed)}
    write_json(timings, ctx.output("repeats"))
    claim = runtime_claim(timings, params)
    ctx.log(f"{claim.id}: {claim.verdict}: {claim.reason}")
    write_claims([claim], ctx.output("claims"))
