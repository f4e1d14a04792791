"""Step `blae-horizons`: batch counts (and final regret) of the batched algorithms at several horizons T."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import write_parquet
from stages.core.progress import progress
from stages.core.seeding import derive_seed
from stages.methods.bandits.blae import batch_bound
from stages.methods.bandits.registry import ALGORITHMS
from stages.papers.blae.params import BLAEParams
from stages.papers.blae.simulate import instance


def horizon_runs(params: BLAEParams, base_seed: int) -> pl.DataFrame:
    """One row per (algorithm, T, seed): batches used, the bound ⌈log₂log₂T⌉ + 2, final regret."""
    settings = params.horizons
    rows = []
    jobs = [(horizon, seed) for horizon in settings.horizons for seed in settings.seeds]
    for horizon, seed in progress(jobs, "blae horizons"):
        bandit = instance(settings.cell, seed, base_seed, params.noise_sd)
        for label in settings.algorithms:
            entry = params.algorithms[label]
            algorithm = ALGORITHMS.build(
                entry.algorithm, entry.options, key=f"blae.algorithms.{label}.options"
            )
            rng = np.random.default_rng(derive_seed(base_seed, "blae-horizons", horizon, seed, label))
            trace = algorithm.run(bandit, horizon, rng)
            rows.append(
                {
                    "algorithm": label,
                    "horizon": horizon,
                    "seed": seed,
                    "batches": trace.n_batches,
                    "bound": batch_bound(horizon),
                    "final_regret": trace.final_regret,
                }
            )
    return pl.DataFrame(rows)


def run(ctx: StepContext) -> None:
    write_parquet(horizon_runs(ctx.params, ctx.common.seed), ctx.output("horizons"))
