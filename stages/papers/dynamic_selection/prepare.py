"""Step `dynamic_selection-prepare`: the training pool, the untouched test split, and the noisy labels.

`labels.parquet` holds, per noise rate and pool row, the observed (possibly flipped) label the methods train on
and the consistency step's projection is cross-fitted on, the clean label and the flip flag (only the
evaluation reads the last two). No clean-labelled split is carved: no method sees a clean training label.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.errors import PipelineError
from stages.core.io import read_parquet, write_json, write_parquet
from stages.core.seeding import derive_seed
from stages.core.validate import ensure_valid
from stages.datasets.noise import flip_labels
from stages.datasets.registry import get_source
from stages.datasets.splits import split_pool_and_test


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


def split_pool(ctx: StepContext) -> tuple[pl.DataFrame, pl.DataFrame, dict]:
    """Pool and test, each validated against the source's schema."""
    params = ctx.params
    table = read_parquet(ctx.input("table"))
    if table.is_empty():
        raise PipelineError(f"{ctx.input('table')}: the dataset table is empty; nothing to draw a pool from")
    pool, test = split_pool_and_test(
        table, params.pool_size, params.test_size, ctx.common.seed, "dynamic_selection"
    )
    schema = get_source(params.dataset).schema
    reports = {
        name: ensure_valid(frame, schema, f"dynamic_selection {name} ({params.dataset})").to_dict()
        for name, frame in {"pool": pool, "test": test}.items()
    }
    ctx.log(f"pool {pool.height}, test {test.height}")
    return pool, test, reports


def run(ctx: StepContext) -> None:
    """Split the dataset table, validate the parts, inject the label noise into the pool, write them."""
    pool, test, reports = split_pool(ctx)
    labels = noisy_labels(pool, ctx.params.noise_rates, ctx.common.seed)
    for rate, block in labels.group_by("noise_rate", maintain_order=True):
        ctx.log(f"noise {rate[0]:.0%}: {int(block['flipped'].sum())} of {block.height} labels flipped")
    write_parquet(pool, ctx.output("pool"))
    write_parquet(test, ctx.output("test"))
    write_parquet(labels, ctx.output("labels"))
    write_json(reports, ctx.output("validation"))
