"""Step `blae-timing`, a benchmark step: the card's `low_overhead` claim from `blae-simulate`'s wall times.

BLAE's wall time ≤ E4's (paired difference below 0) and ≤ `runtime_ratio` × PhaElimD's (per-seed ratio below
the bound), one timing per run from `timings/simulate.json`. Wall-clock seconds differ on every run, so this
step reads and writes only `timings/` files, and no data output reads them: `claims.json` stays byte-identical,
and this claim goes to `timings/claims.json` (gathered by the `report-timings` stage).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.claims import Claim, compare, compare_paired, verdict_claim, write_claims
from stages.core.context import StepContext
from stages.core.io import read_json
from stages.papers.blae.claims import per_seed
from stages.papers.blae.params import BLAEParams


def runtime_claim(timings: dict, params: BLAEParams) -> Claim:
    """BLAE's wall time against E4's (paired by seed) and against PhaElimD's (per-seed ratio), per cell."""
    names = params.claims
    seconds = pl.DataFrame(timings["runs"])
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
                    note="one timing per run",
                )
            )
        cheap = per_seed(seconds, cell, names.cheap_baseline, "seconds")
        evidence.append(
            compare(
                f"{names.method} / {names.cheap_baseline} seconds in {cell}",
                {seed: ours[seed] / cheap[seed] for seed in ours},
                names.runtime_ratio,
                "below",
                names.confidence,
                note="one timing per run",
            )
        )
    for item in evidence:
        item.median = float(np.median(list(item.per_seed.values())))
    return verdict_claim(
        id="low_overhead",
        statement=f"BLAE has low computational overhead: wall time ≤ E4's in every cell and ≤ "
        f"{names.runtime_ratio}× PhaElimD's (the bound is ours).",
        measured={"median_seconds": medians},
        criterion=f"per cell: t interval of the paired {names.method} − {names.reference} seconds wholly below 0 "
        f"(cells where E4 ran), and of the per-seed ratio {names.method}/{names.cheap_baseline} wholly below "
        f"{names.runtime_ratio}",
        evidence=evidence,
    )


def run(ctx: StepContext) -> None:
    """Judge the overhead claim and write `timings/claims.json`."""
    claim = runtime_claim(read_json(ctx.input("timings")), ctx.params)
    ctx.log(f"{claim.id}: {claim.verdict}: {claim.reason}")
    write_claims([claim], ctx.output("claims"))
