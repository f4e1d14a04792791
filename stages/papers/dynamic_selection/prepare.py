"""Step `dynamic_selection-prepare`: the training pool, the untouched test split, and the noisy labels.

`labels.parquet` holds, per noise rate and pool row, the observed (possibly flipped) label the methods train
on, the clean label and the flip flag (only the evaluation reads the last two).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import write_json, write_parquet
from stages.core.seeding import derive_seed
from stages.datasets.noise import flip_labels
from stages.datasets.pool import split_and_validate


def noisy_labels(pool: pl.DataFrame, noise_rates: list[float], seed: int) -> pl.DataFrame:
    """One block of rows per noise rate: row, sample_id, label (observed), clean_label, flipped."""
    clean = pool["label"].to_numpy()
    n_classes = int(clean.max()) + 1
    blocks = []
    for rate in noise_rates:
        observed, flipped = flip_labels(
            clean, rate, n_classes, derive_seed(seed, "dynamic_selection", "noise", rate)
        )
        blocks.append(
            pl.DataFrame(
                {
                    "noise_rate": np.full(len(clean), rate),
                    "row": np.arange(len(clean), dtype=np.int64),
                    "sample_id": pool["sample_id"].to_numpy(),
                    "label": observed,
                    "clean_label": clean.astype(np.int64),
                    "flipped": flipped,
                }
            )
        )
    return pl.concat(blocks)


def run(ctx: StepContext) -> None:
    """Split the dataset table, validate pool and test, inject the label noise, write all three."""
    pool, test, reports = split_and_validate(ctx, "dynamic_selection")
    labels = noisy_labels(pool, ctx.params.noise_rates, ctx.common.seed)
    for rate, block in labels.group_by("noise_rate", maintain_order=True):
        ctx.log(f"noise {rate[0]:.0%}: {int(block['flipped'].sum())} of {block.height} labels flipped")
    write_parquet(pool, ctx.output("pool"))
    write_parquet(test, ctx.output("test"))
    write_parquet(labels, ctx.output("labels"))
    write_json(reports, ctx.output("validation"))
