"""Step `info_coevolution-reference`: full-label accuracy, the target every strategy must reach.

The model is the one the annotation loop trains (same recipe, one torch thread), fitted on every pool row with its
label, once per reference seed (at least three); the evaluate step judges "reached" against their mean and its
t interval.
"""

from __future__ import annotations

import numpy as np

from stages.core.context import StepContext
from stages.core.io import write_json
from stages.core.seeding import derive_seed
from stages.methods.selection.online.loop import fit_model
from stages.methods.selection.online.strategy import TrainingTargets
from stages.models.training import fit_scaler
from stages.models.workers import map_runs
from stages.papers.info_coevolution.data import PoolAndTest, load_pool_and_test
from stages.papers.info_coevolution.params import InfoCoevolutionParams


def run_seed_value(base_seed: int, seed: int) -> int:
    """The seed one annotation run (and its reference) uses for initialisation and draws."""
    return derive_seed(base_seed, "info_coevolution", seed)


def full_label_accuracy(data: PoolAndTest, params: InfoCoevolutionParams, base_seed: int, seed: int) -> float:
    """Test accuracy of the model trained on the fully labelled pool under `seed`."""
    scale = fit_scaler(data.pool.features, params.train)
    value = run_seed_value(base_seed, seed)
    targets = TrainingTargets(np.arange(len(data.pool)), data.pool.labels)
    model = fit_model(
        scale(data.pool.features), targets, data.n_classes, params.train,
        params.min_steps, value, derive_seed(value, "full"),
    )  # fmt: skip
    return data.test_accuracy()(model, scale)


def run(ctx: StepContext) -> None:
    """One full-label run per reference seed (in one-thread worker processes, as the annotation runs)."""
    params = ctx.params
    data = load_pool_and_test(ctx.input("pool"), ctx.input("test"))
    tasks = [(data, params, ctx.common.seed, seed) for seed in params.reference_seeds]
    accuracies = map_runs(full_label_accuracy, tasks, params.workers, "full-label reference")
    runs = []
    for seed, accuracy in zip(params.reference_seeds, accuracies, strict=True):
        ctx.log(f"seed {seed}: full-label accuracy {accuracy:.4f}")
        runs.append({"seed": seed, "n_train": len(data.pool), "accuracy": accuracy})
    write_json({"runs": runs}, ctx.output("reference"))
