"""Step `climb-fusion` (RQ3): frozen ECG encoders (the multitask one, and a weak one: the single-task model of
`fusion.weak_site`) give tokens for the fusion cohort; with its EHR table (standardised on the training patients),
late / concat + MLP / 8-head cross-attention heads are trained for 48-h-style mortality (AUROC) and length of stay
(MAE, days), on all training patients (`full`) or on `shots` per mortality class, oversampled (`few`). Per test
patient predictions are kept for the claims' paired bootstrap."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_parquet
from stages.core.seeding import derive_seed
from stages.methods.multitask.encoder import ECGEncoder
from stages.methods.multitask.fusion import FusionOptions, predict_head, train_head
from stages.methods.multitask.metrics import auroc
from stages.methods.multitask.train import embed
from stages.models.workers import map_runs
from stages.papers.climb.data import FUSION_SITE, load
from stages.papers.climb.encoders import encoder_state
from stages.papers.climb.params import ClimbParams
from stages.papers.climb.prepare import EHR_FEATURES
from stages.papers.climb.train import config_of

INITS = ("multitask", "weak")
REGIMES = ("full", "few")
TASKS = ("mortality", "los")


def few_shot_weights(mortality: np.ndarray, shots: int, rng: np.random.Generator) -> np.ndarray:
    """Sampling weights: `shots` patients per mortality class (weight 1/class count: balanced), others 0."""
    weights = np.zeros(len(mortality))
    for value in (0.0, 1.0):
        pool = np.flatnonzero(mortality == value)
        take = rng.choice(pool, size=min(shots, len(pool)), replace=False)
        weights[take] = 1.0 / len(take)
    return weights


def _one(
    seed: int, init: str, head: str, train: dict, test: dict, options: FusionOptions, shots: int
) -> list[dict]:
    rows = []
    for regime in REGIMES:
        weights = None
        if regime == "few":
            weights = few_shot_weights(
                train["mortality"], shots, np.random.default_rng(derive_seed(seed, "climb", "fusion-shots"))
            )
        for task in TASKS:
            target = train["mortality"] if task == "mortality" else train["los_z"]
            model = train_head(
                head,
                train["tokens"],
                train["ehr"],
                target,
                "binary" if task == "mortality" else "regression",
                options,
                derive_seed(seed, "climb", "fusion", head, task),
                weights,
            )
            out = predict_head(model, test["tokens"], test["ehr"])
            if task == "los":
                out = np.exp(out * train["los_sd"] + train["los_mean"])
            rows.append(
                {"seed": seed, "init": init, "head": head, "regime": regime, "task": task, "prediction": out}
            )
    return rows


def run(ctx: StepContext) -> None:
    params: ClimbParams = ctx.params
    records, index = ctx.input("records"), read_parquet(ctx.input("index"))
    ehr = read_parquet(ctx.input("ehr"))
    fusion = params.fusion
    options = FusionOptions(
        fusion.steps, fusion.batch, fusion.lr, 1e-4, fusion.hidden, fusion.attention_heads
    )
    split = {name: load(records, index, FUSION_SITE, name, params) for name in ("train", "test")}
    table = {name: ehr.filter(pl.col("split") == name).sort("record") for name in ("train", "test")}
    for name in split:
        if table[name]["record"].to_list() != split[name].names:
            raise AssertionError(f"climb-fusion: the EHR table's {name} patients differ from the records")
    features = table["train"].select(EHR_FEATURES).to_numpy()
    centre, scale = features.mean(axis=0), features.std(axis=0) + 1e-9
    log_los = np.log(table["train"]["los"].to_numpy())
    tasks = []
    config = config_of(params)
    for seed in params.seeds:
        for init in INITS:
            regime = "multitask" if init == "multitask" else fusion.weak_site
            encoder = ECGEncoder(config)
            encoder.load_state_dict(encoder_state(ctx.input("encoders"), regime, seed))
            data = {}
            for name in ("train", "test"):
                data[name] = {
                    "tokens": embed(encoder, split[name].x, tokens=True),
                    "ehr": (table[name].select(EHR_FEATURES).to_numpy() - centre) / scale,
                    "mortality": table[name]["mortality"].to_numpy(),
                }
            data["train"] |= {
                "los_z": (log_los - log_los.mean()) / log_los.std(),
                "los_mean": float(log_los.mean()),
                "los_sd": float(log_los.std()),
            }
            for head in fusion.heads:
                tasks.append((seed, init, head, data["train"], data["test"], options, fusion.shots))
    results = map_runs(_one, tasks, params.workers, desc="climb: fusion heads")
    test = table["test"]
    mortality, los = test["mortality"].to_numpy(), test["los"].to_numpy()
    summary, predictions = [], []
    for row in (row for rows in results for row in rows):
        out = row.pop("prediction")
        metric = auroc(out, mortality) if row["task"] == "mortality" else float(np.mean(np.abs(out - los)))
        summary.append(
            row | {"metric": "auroc" if row["task"] == "mortality" else "mae_days", "value": metric}
        )
        predictions.append(
            pl.DataFrame({"record": test["record"], "prediction": out.astype(np.float64)}).with_columns(
                **{key: pl.lit(value) for key, value in row.items()}
            )
        )
    write_parquet(pl.DataFrame(summary).sort("task", "regime", "init", "head", "seed"), ctx.output("fusion"))
    write_parquet(
        pl.concat(predictions).sort("task", "regime", "init", "head", "seed", "record"),
        ctx.output("fusion_predictions"),
    )
    ctx.log(f"{len(summary)} fusion runs")
