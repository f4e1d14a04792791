"""Step `climb-train` (RQ1): per seed, four single-task models (one per site) and one multitask model (all four
sites jointly, one head over the union label set), the same encoder, steps, batch and recipe; each scored by
macro AUROC on every site's test records (classes with ≥ 1 positive and ≥ 1 negative there)."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
from safetensors.torch import save_file

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_json, write_parquet
from stages.datasets.ecg.snomed import CLASSES
from stages.methods.multitask.encoder import EncoderConfig
from stages.methods.multitask.metrics import per_class_auroc
from stages.methods.multitask.train import SiteData, TrainOptions, predict, train_multitask, train_single_task
from stages.models.workers import map_runs
from stages.papers.climb.data import load
from stages.papers.climb.params import SITES, ClimbParams


def config_of(params: ClimbParams) -> EncoderConfig:
    return EncoderConfig(leads=8, widths=tuple(params.training.widths))


def options_of(params: ClimbParams) -> TrainOptions:
    t = params.training
    return TrainOptions(t.steps, t.batch, t.lr, t.weight_decay, t.eval_every)


def _train_one(
    regime: str,
    seed: int,
    train: dict[str, SiteData],
    validation: dict[str, SiteData],
    test: dict[str, SiteData],
    config: EncoderConfig,
    options: TrainOptions,
) -> dict:
    if regime == "multitask":
        model, log = train_multitask(train, validation, CLASSES, config, options, seed)
    else:
        model, log = train_single_task(regime, train, validation, CLASSES, config, options, seed)
    scores = {site: per_class_auroc(predict(model, data.x), data.y, CLASSES) for site, data in test.items()}
    state = {key: value.detach().clone() for key, value in model.encoder.state_dict().items()}
    return {"regime": regime, "seed": seed, "scores": scores, "log": log, "encoder": state}


def run(ctx: StepContext) -> None:
    params: ClimbParams = ctx.params
    records, index = ctx.input("records"), read_parquet(ctx.input("index"))
    splits = {
        split: {site: load(records, index, site, split, params).site_data() for site in SITES}
        for split in ("train", "validation", "test")
    }
    ctx.log("records read back through the loader")
    config, options = config_of(params), options_of(params)
    tasks = []
    for seed in params.seeds:
        for regime in (*SITES, "multitask"):
            keep = SITES if regime == "multitask" else (regime,)
            tasks.append(
                (
                    regime,
                    seed,
                    {s: splits["train"][s] for s in keep},
                    {s: splits["validation"][s] for s in keep},
                    splits["test"],
                    config,
                    options,
                )
            )
    results = map_runs(_train_one, tasks, params.workers, desc="climb: single-task and multitask")
    rows, tensors, logs = [], {}, {}
    for result in results:
        kind = "multitask" if result["regime"] == "multitask" else "single"
        for site, per_class in result["scores"].items():
            own = result["regime"] in ("multitask", site)
            rows.append(
                {
                    "seed": result["seed"],
                    "model": result["regime"],
                    "regime": kind,
                    "site": site,
                    "own_site": own,
                    "macro_auroc": float(np.mean(list(per_class.values()))) if per_class else float("nan"),
                    "classes_scored": len(per_class),
                    "per_class": json.dumps({k: round(v, 6) for k, v in per_class.items()}, sort_keys=True),
                }
            )
        for key, value in result["encoder"].items():
            tensors[f"{result['regime']}/{result['seed']}/{key}"] = value.contiguous()
        logs[f"{result['regime']}/{result['seed']}"] = {
            "best_step": result["log"]["best_step"],
            "validation_auroc": round(result["log"]["validation"], 6),
            "curve": [[step, round(score, 6)] for step, score in result["log"]["curve"]],
            "samples": result["log"]["samples"],
        }
    frame = pl.DataFrame(rows).sort("seed", "model", "site")
    write_parquet(frame, ctx.output("auroc"))
    save_file(tensors, str(ctx.output("encoders")))
    write_json(logs, ctx.output("training"))
    own = (
        frame.filter(pl.col("own_site"))
        .group_by("regime", "site")
        .agg(pl.col("macro_auroc").mean())
        .sort("site", "regime")
    )
    ctx.log(
        "own-site macro AUROC: "
        + ", ".join(f"{r['site']}/{r['regime']} {r['macro_auroc']:.3f}" for r in own.iter_rows(named=True))
    )
