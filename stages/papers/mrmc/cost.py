"""Step `mrmc-cost`: the selection-cost benchmark, every timing measured in this one run.

Per seed, with the trace step's model settings, these calls are timed `cost.repeats` times after one warm-up,
interleaved in a seeded random order (`stages.core.timing.interleaved_seconds`), so a busy spell of the
shared machine hits every contender alike:

- `trace_epoch`: one trace epoch on the whole pool (a training epoch plus the evaluation pass that logs
  every sample's loss);
- `trace_train_epoch`: the same training epoch without the evaluation pass (the training the trace observes);
- `full_epoch`: one training epoch of the core-set model recipe on the whole pool;
- `core_epoch`: one such epoch on MRMC's core-set at the cost budget;
- `score:<method>`: the selection call of MRMC and of each score-based baseline at the cost budget, on the
  traced pool (the same call `mrmc-select` makes).

The timing step combines per-seed medians: selection = R × trace epoch + scoring; training = epochs × epoch.
Only wall-clock seconds come out, so the output is a timings file.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import torch

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_json
from stages.core.progress import progress
from stages.core.seeding import derive_seed
from stages.core.timing import interleaved_seconds
from stages.datasets.classification import to_arrays
from stages.models.config import TrainConfig
from stages.models.training import build_model, fit_scaler, train_classifier
from stages.papers.mrmc.select import selection_call, selection_pool


def epoch_call(inputs: torch.Tensor, labels: torch.Tensor, config: TrainConfig, seed: int, trace: bool):
    """One epoch of a fresh model on `inputs` (with the per-epoch evaluation pass when `trace`)."""
    one_epoch = config.model_copy(update={"epochs": 1})
    n_classes = int(labels.max()) + 1

    def call() -> None:
        model = build_model(inputs.shape[1], n_classes, one_epoch, seed)
        train_classifier(model, inputs, labels, one_epoch, seed, record_trace=trace)

    return call


def core_rows(selections: pl.DataFrame, sample_ids: np.ndarray, method: str, budget: float, seed: int):
    """Pool row positions of one core-set."""
    chosen = selections.filter(
        (pl.col("method") == method) & (pl.col("budget") == budget) & (pl.col("seed") == seed)
    )["sample_id"].to_numpy()
    return torch.from_numpy(np.flatnonzero(np.isin(sample_ids, chosen)))


def run(ctx: StepContext) -> None:
    """Interleaved repeats per seed → `timings/cost.json`."""
    params = ctx.params
    claims = params.claims
    pool = to_arrays(read_parquet(ctx.input("pool")))
    trace_table = read_parquet(ctx.input("trace"))
    selections = read_parquet(ctx.input("selections"))
    labels = torch.from_numpy(pool.labels)
    trace_inputs = fit_scaler(pool.features, params.trace)(pool.features)
    train_inputs = fit_scaler(pool.features, params.train)(pool.features)
    per_seed = {}
    for seed in progress(params.seeds, desc="cost"):
        view = selection_pool(pool, trace_table, seed, params.feature_space)
        core = core_rows(selections, pool.sample_ids, claims.mrmc_method, claims.cost_budget, seed)
        run_seed = derive_seed(ctx.common.seed, "mrmc", "cost", seed)
        calls = {
            "trace_epoch": epoch_call(trace_inputs, labels, params.trace, run_seed, trace=True),
            "trace_train_epoch": epoch_call(trace_inputs, labels, params.trace, run_seed, trace=False),
            "full_epoch": epoch_call(train_inputs, labels, params.train, run_seed, trace=False),
            "core_epoch": epoch_call(train_inputs[core], labels[core], params.train, run_seed, trace=False),
        }
        for label in [claims.mrmc_method, *claims.score_baselines]:
            calls[f"score:{label}"] = selection_call(
                view, params, label, claims.cost_budget, seed, ctx.common.seed
            )
        measured = interleaved_seconds(calls, params.cost.repeats, run_seed)
        per_seed[str(seed)] = {name: [round(value, 6) for value in times] for name, times in measured.items()}
    write_json(
        {
            "repeats": params.cost.repeats,
            "trace_epochs": params.trace.epochs,
            "train_epochs": params.train.epochs,
            "paper_trace_epochs": params.cost.paper_trace_epochs,
            "paper_train_epochs": params.cost.paper_train_epochs,
            "cost_budget": claims.cost_budget,
            "seconds": per_seed,
        },
        ctx.output("timings"),
    )
