"""The online-annotation loop: seed set → rounds of (train → embed → select → annotate from the oracle).

Works on any in-memory classification pool: features plus the hidden labels that play the annotator. The
model is retrained from the same initialisation every round on what the strategy says to train on (the
annotations, plus pseudo-labels for semi-supervised strategies). An optional `evaluate` callback scores each
round's model for reporting only; nothing it returns reaches the strategy.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import torch
from pydantic import Field

from stages.core.errors import PipelineError
from stages.core.params import StrictModel
from stages.core.progress import progress
from stages.methods.selection.online.strategy import AnnotationStrategy, PoolView, TrainingTargets
from stages.models.mlp import MLPClassifier
from stages.models.training import Standardizer, TrainConfig, build_model, embed, train_classifier


class Schedule(StrictModel):
    """How many annotations: the random seed set, per round, per batch, and the overall budget (counts)."""

    seed_size: int = Field(ge=1)
    round_size: int = Field(ge=1)
    batch_size: int = Field(100, ge=1)
    budget: int = Field(ge=1)
    min_steps: int = Field(300, ge=0, description="gradient steps at least, so small labelled sets train too")


@dataclass(frozen=True)
class RoundRecord:
    """The state after one round's training."""

    round: int
    n_annotated: int
    n_pseudo: int
    accuracy: float
    remaining_gain: float
    stopped: bool
    select_seconds: float
    train_seconds: float


@dataclass
class AnnotationRun:
    """Every round's record and the annotated rows with the round that annotated them (0 = seed set)."""

    records: list[RoundRecord] = field(default_factory=list)
    annotated_rows: list[int] = field(default_factory=list)
    annotated_rounds: list[int] = field(default_factory=list)


def check_schedule(schedule: Schedule, pool_size: int) -> None:
    """Fail clearly when the pool cannot hold the schedule."""
    if pool_size < 2:
        raise PipelineError(f"the annotation pool has {pool_size} rows; it needs at least 2")
    if schedule.budget > pool_size:
        raise PipelineError(f"annotation budget {schedule.budget} exceeds the pool size {pool_size}")
    if schedule.seed_size >= schedule.budget:
        raise PipelineError(
            f"seed set {schedule.seed_size} must be smaller than the budget {schedule.budget}"
        )


def epochs_for(config: TrainConfig, n_rows: int, min_steps: int) -> TrainConfig:
    """`config` with enough epochs for at least `min_steps` gradient steps on `n_rows` rows."""
    steps_per_epoch = math.ceil(n_rows / config.batch_size)
    return config.model_copy(update={"epochs": max(config.epochs, math.ceil(min_steps / steps_per_epoch))})


def fit_model(
    inputs: torch.Tensor,
    targets: TrainingTargets,
    n_classes: int,
    train: TrainConfig,
    min_steps: int,
    init_seed: int,
    shuffle_seed: int,
) -> MLPClassifier:
    """A fresh model (initialisation fixed by `init_seed`) trained on the target rows."""
    model = build_model(inputs.shape[1], n_classes, train, init_seed)
    config = epochs_for(train, len(targets.rows), min_steps)
    rows = torch.from_numpy(targets.rows)
    train_classifier(model, inputs[rows], torch.from_numpy(targets.labels), config, shuffle_seed)
    return model


@torch.no_grad()
def predict_probabilities(model: MLPClassifier, inputs: torch.Tensor, batch_size: int = 4096) -> np.ndarray:
    """Softmax outputs per row."""
    model.eval()
    chunks = [model(inputs[i : i + batch_size]).softmax(dim=1) for i in range(0, len(inputs), batch_size)]
    return torch.cat(chunks).double().numpy()


def run_online_annotation(
    features: np.ndarray,
    oracle: np.ndarray,
    strategy: AnnotationStrategy,
    schedule: Schedule,
    train: TrainConfig,
    seed: int,
    evaluate: Callable[[MLPClassifier, Standardizer], float] | None = None,
    desc: str | None = None,
) -> AnnotationRun:
    """Annotate until the budget is spent or the strategy's stop rule fires; record every round.

    The seed set depends only on `seed`, so strategies compared under one seed start from the same labels and
    the same model initialisation.
    """
    check_schedule(schedule, len(oracle))
    standardize = Standardizer.fit(features)
    inputs, n_classes = standardize(features), int(oracle.max()) + 1
    rng = np.random.default_rng(seed)
    labelled = np.zeros(len(oracle), bool)
    seed_rows = np.sort(
        np.random.default_rng([seed, 1]).choice(len(oracle), schedule.seed_size, replace=False)
    )
    labelled[seed_rows] = True
    run = AnnotationRun(annotated_rows=seed_rows.tolist(), annotated_rounds=[0] * len(seed_rows))
    targets = TrainingTargets(seed_rows, oracle[seed_rows])
    stopped, select_seconds = False, 0.0
    max_rounds = 1 + math.ceil((schedule.budget - schedule.seed_size) / schedule.round_size)
    rounds = progress(range(max_rounds), desc=desc) if desc else range(max_rounds)
    for round_number in rounds:
        started = time.perf_counter()
        model = fit_model(inputs, targets, n_classes, train, schedule.min_steps, seed, seed + round_number)
        train_seconds = time.perf_counter() - started
        remaining = strategy.remaining_gain() if round_number else None
        run.records.append(
            RoundRecord(
                round_number, int(labelled.sum()), targets.n_pseudo,
                evaluate(model, standardize) if evaluate else math.nan,
                math.nan if remaining is None else remaining, stopped,
                select_seconds, train_seconds,
            )
        )  # fmt: skip
        if stopped or labelled.sum() >= schedule.budget:
            break
        started = time.perf_counter()
        view = PoolView(embed(model, inputs), predict_probabilities(model, inputs), labelled.copy(),
                        np.where(labelled, oracle, -1))  # fmt: skip
        strategy.begin_round(view, rng)
        annotated_before = int(labelled.sum())
        stopped = annotate_round(strategy, oracle, labelled, schedule, run, round_number + 1)
        if stopped and labelled.sum() == annotated_before:  # nothing new: this round's model is the last
            run.records[-1] = replace(run.records[-1], stopped=True)
            break
        targets = strategy.training_targets()
        select_seconds = time.perf_counter() - started
    return run


def annotate_round(
    strategy: AnnotationStrategy,
    oracle: np.ndarray,
    labelled: np.ndarray,
    schedule: Schedule,
    run: AnnotationRun,
    round_number: int,
) -> bool:
    """Annotate one round in batches; returns whether the strategy's stop rule fired."""
    quota = min(schedule.round_size, schedule.budget - int(labelled.sum()))
    while quota > 0:
        if strategy.should_stop():
            return True
        rows = strategy.propose(min(schedule.batch_size, quota))
        if len(rows) == 0:
            return True
        strategy.observe(rows, oracle[rows])
        labelled[rows] = True
        run.annotated_rows.extend(rows.tolist())
        run.annotated_rounds.extend([round_number] * len(rows))
        quota -= len(rows)
    return strategy.should_stop()
