"""Step `dynamic_selection-prepare`: the held-out reference split, the training pool, the untouched test split,
and the noisy labels.

`held_out.parquet` is `held_out_size` clean-labelled train rows, drawn (stratified) first; the pool is drawn
from the remaining train rows, so the two are disjoint. It stands for CLIP's pretraining data: the projection
the consistency step fits on it never sees a pool label, and it gets no injected noise. `labels.parquet`
holds, per noise rate and pool row, the observed (possibly flipped) label the methods train on, the clean
label and the flip flag (only the evaluation reads the last two).
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
from stages.datasets.splits import split_pool_and_test, stratified_subsample


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


def carve_held_out(table: pl.DataFrame, size: int, seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """`size` train rows (stratified) for the reference split, and the table without them."""
    train = table.filter(pl.col("split") == "train")
    if size > train.height // 2:
        raise PipelineError(
            f"dynamic_selection.held_out_size {size}: at most half of the {train.height} train rows, so the pool "
            "keeps the rest"
        )
    held_out = stratified_subsample(train, size, derive_seed(seed, "dynamic_selection", "held_out"))
    rest = table.filter(~pl.col("sample_id").is_in(held_out["sample_id"].implode()))
    return held_out, rest


def split_three(ctx: StepContext) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, dict]:
    """Held-out reference, pool and test, each validated against the source's schema."""
    params = ctx.params
    table = read_parquet(ctx.input("table"))
    if table.is_empty():
        raise PipelineError(f"{ctx.input('table')}: the dataset table is empty; nothing to draw a pool from")
    held_out, rest = carve_held_out(table, params.held_out_size, ctx.common.seed)
    pool, test = split_pool_and_test(
        rest, params.pool_size, params.test_size, ctx.common.seed, "dynamic_selection"
    )
    schema = get_source(params.dataset).schema
    frames = {"held_out": held_out, "pool": pool, "test": test}
    reports = {
        name: ensure_valid(frame, schema, f"dynamic_selection {name} ({params.dataset})").to_dict()
        for name, frame in frames.items()
    }
    ctx.log(f"held-out {held_out.height} rows, pool {pool.height}, test {test.height}")
    return held_out, pool, test, reports


def run(ctx: StepContext) -> None:
    """Split the dataset table, validate the parts, inject the label noise into the pool, write them."""
    held_out, pool, test, reports = split_three(ctx)
    labels = noisy_labels(pool, ctx.params.noise_rates, ctx.common.seed)
    for rate, block in labels.group_by("noise_rate", maintain_order=True):
        ctx.log(f"noise {rate[0]:.0%}: {int(block['flipped'].sum())} of {block.height} labels flipped")
    write_parquet(held_out, ctx.output("held_out"))
    write_parquet(pool, ctx.output("pool"))
    write_parquet(test, ctx.output("test"))
    write_parquet(labels, ctx.output("labels"))
    write_json(reports, ctx.output("validation"))
