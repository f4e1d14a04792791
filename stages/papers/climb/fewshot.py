"""Step `climb-fewshot` (RQ2): k records per class of the out-of-distribution site (finer labels: LBBB-/RBBB-like,
AV block, brady, tachy), drawn `draws` times per seed, fine-tune an encoder initialised from the multitask model,
from the single-site model, or from scratch (the same new head, steps and batches for all three); macro AUROC on
the OOD test records. The OOD site is in no encoder's training data."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_parquet
from stages.core.seeding import derive_seed
from stages.datasets.ecg.snomed import OOD_CLASSES
from stages.methods.multitask.metrics import macro_auroc
from stages.methods.multitask.train import TrainOptions, fine_tune, k_shot_indices, predict
from stages.models.workers import map_runs
from stages.papers.climb.data import OOD_SITE, load
from stages.papers.climb.encoders import encoder_state
from stages.papers.climb.params import ClimbParams
from stages.papers.climb.train import config_of

INITS = ("multitask", "single_site", "scratch")


def _one(
    seed: int, draw: int, k: int, states: dict, pool_x, pool_y, test_x, test_y, config, options
) -> list[dict]:
    rng = np.random.default_rng(derive_seed(seed, "climb", "fewshot", draw, k))
    chosen = k_shot_indices(pool_y, k, rng)
    rows = []
    for init in INITS:
        model = fine_tune(
            states[init],
            config,
            pool_x[chosen],
            pool_y[chosen],
            options,
            derive_seed(seed, "climb", "head", draw),
        )
        rows.append(
            {
                "seed": seed,
                "draw": draw,
                "k": k,
                "init": init,
                "shots": len(chosen),
                "macro_auroc": macro_auroc(predict(model, test_x), test_y, OOD_CLASSES),
            }
        )
    return rows


def run(ctx: StepContext) -> None:
    params: ClimbParams = ctx.params
    records, index = ctx.input("records"), read_parquet(ctx.input("index"))
    pool = load(records, index, OOD_SITE, "pool", params)
    test = load(records, index, OOD_SITE, "test", params)
    config = config_of(params)
    few = params.few_shot
    options = TrainOptions(few.steps, few.batch, few.lr, params.training.weight_decay, few.steps)
    tasks = []
    for seed in params.seeds:
        states = {
            "multitask": encoder_state(ctx.input("encoders"), "multitask", seed),
            "single_site": encoder_state(ctx.input("encoders"), few.single_site, seed),
            "scratch": None,
        }
        for draw in range(few.draws):
            for k in few.shots:
                tasks.append((seed, draw, k, states, pool.x, pool.y, test.x, test.y, config, options))
    results = map_runs(_one, tasks, params.workers, desc="climb: few-shot fine-tuning")
    frame = pl.DataFrame([row for rows in results for row in rows]).sort("k", "init", "seed", "draw")
    write_parquet(frame, ctx.output("fewshot"))
    mean = frame.group_by("k", "init").agg(pl.col("macro_auroc").mean()).sort("k", "init")
    ctx.log(
        "few-shot macro AUROC: "
        + ", ".join(f"k={r['k']}/{r['init']} {r['macro_auroc']:.3f}" for r in mean.iter_rows(named=True))
    )
