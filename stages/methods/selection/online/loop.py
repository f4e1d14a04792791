"""The online-annotation loop: seed set → rounds of (train → embed the pool → select → annotate from the oracle).

Works on any in-memory classification pool: features plus the hidden labels that play the annotator. Every
round a model is trained from the same initialisation on the current annotations (the *teacher*: it has seen
every label annotated so far, this round's included). With `training.mode: fixmatch` the teacher then goes on
with FixMatch over the rest of the pool (`stages.models.fixmatch`), so its first pseudo-labels come from a
model that saw the round's labels. With a labelled calibration split, the model's logits are
temperature-scaled (`stages.models.calibration`) before any strategy reads its confidences. An optional
`evaluate` callback scores each round's model for reporting only; nothing it returns reaches the strategy.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
import torch
from pydantic import Field

from stages.core.errors import PipelineError
from stages.core.params import StrictModel
from stages.core.progress import progress
from stages.methods.selection.online.strategy import AnnotationStrategy, PoolView, TrainingTargets
from stages.models.augment import image_shape_of
from stages.models.calibration import calibrated_probabilities, fit_temperature
from stages.models.fixmatch import train_fixmatch
from stages.models.fixmatch_config import FixMatchConfig
from stages.models.training import TrainConfig, build_model, fit_scaler, train_classifier

TrainingMode = Literal["supervised", "fixmatch"]
CONFIDENT = 0.9


class Schedule(StrictModel):
    """How many annotations: the random seed set, per round, per batch, and the overall budget (counts)."""

    seed_size: int = Field(ge=1)
    round_size: int = Field(ge=1)
    batch_size: int = Field(100, ge=1)
    budget: int = Field(ge=1)
    min_steps: int = Field(300, ge=0, description="gradient steps at least, so small labelled sets train too")


class RoundTraining(StrictModel):
    """How each round's model learns: supervised on the annotations, or a supervised teacher then FixMatch."""

    mode: TrainingMode = "supervised"
    fixmatch: FixMatchConfig = FixMatchConfig()


@dataclass(frozen=True)
class Calibration:
    """A labelled held-out split (never the test split) the temperature is fitted on each round."""

    features: np.ndarray
    labels: np.ndarray


@dataclass(frozen=True)
class RoundRecord:
    """The state after one round's training; `diagnostics` describe the view its model gave the strategy
    (temperature, confident share and precision, radii and the share of neighbours inside them)."""

    round: int
    n_annotated: int
    mask_rate: float
    accuracy: float
    remaining_gain: float
    stopped: bool
    select_seconds: float
    train_seconds: float
    diagnostics: dict[str, float] = field(default_factory=dict)


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
) -> torch.nn.Module:
    """A fresh model (initialisation fixed by `init_seed`) trained on the target rows."""
    model = build_model(inputs.shape[1], n_classes, train, init_seed)
    config = epochs_for(train, len(targets.rows), min_steps)
    rows = torch.from_numpy(targets.rows)
    train_classifier(model, inputs[rows], torch.from_numpy(targets.labels), config, shuffle_seed)
    return model


def fit_round_model(
    inputs: torch.Tensor,
    targets: TrainingTargets,
    n_classes: int,
    train: TrainConfig,
    training: RoundTraining,
    min_steps: int,
    init_seed: int,
    shuffle_seed: int,
) -> tuple[torch.nn.Module, float]:
    """This round's model and its FixMatch mask rate (NaN when supervised).

    The teacher is fitted on `targets` (every current annotation); FixMatch, if asked for, continues from it on
    the rows not in `targets`, so pseudo-labelling starts from a model that has seen the round's labels.
    """
    model = fit_model(inputs, targets, n_classes, train, min_steps, init_seed, shuffle_seed)
    if training.mode == "supervised":
        return model, math.nan
    unlabelled = np.setdiff1d(np.arange(len(inputs)), targets.rows)
    shape = image_shape_of(inputs.shape[1], train.image_shape, "train.image_shape")
    stats = train_fixmatch(
        model, inputs[torch.from_numpy(targets.rows)], torch.from_numpy(targets.labels),
        inputs[torch.from_numpy(unlabelled)], shape, training.fixmatch, shuffle_seed,
    )  # fmt: skip
    return model, stats.mean_mask_rate


@torch.no_grad()
def logits_and_embeddings(
    model: torch.nn.Module, inputs: torch.Tensor, batch_size: int = 1024
) -> tuple[np.ndarray, np.ndarray]:
    """Class logits and penultimate embeddings per row, from one forward pass in eval mode."""
    model.eval()
    logits, embeddings = [], []
    for start in range(0, len(inputs), batch_size):
        embedded = model.embed(inputs[start : start + batch_size])
        embeddings.append(embedded)
        logits.append(model.head(embedded))
    return torch.cat(logits).double().numpy(), torch.cat(embeddings).numpy()


def predict_probabilities(model: torch.nn.Module, inputs: torch.Tensor, batch_size: int = 1024) -> np.ndarray:
    """Softmax outputs per row (uncalibrated)."""
    return calibrated_probabilities(logits_and_embeddings(model, inputs, batch_size)[0], 1.0)


def pool_view(
    model: torch.nn.Module,
    inputs: torch.Tensor,
    labelled: np.ndarray,
    oracle: np.ndarray,
    calibration: tuple[torch.Tensor, np.ndarray] | None,
) -> tuple[PoolView, dict[str, float]]:
    """What the strategy sees (temperature-scaled probabilities when a calibration split is given) and the
    view's calibration diagnostics: temperature, share of unlabelled rows with normalised confidence > 0.9 and
    the precision of their predicted classes (the oracle is read for this report only)."""
    logits, embeddings = logits_and_embeddings(model, inputs)
    temperature = 1.0
    if calibration is not None:
        calibration_logits, _ = logits_and_embeddings(model, calibration[0])
        temperature = fit_temperature(calibration_logits, calibration[1])
    probabilities = calibrated_probabilities(logits, temperature)
    n_classes = probabilities.shape[1]
    confidence = (probabilities.max(axis=1) - 1 / n_classes) / (1 - 1 / n_classes)
    confident = (confidence > CONFIDENT) & ~labelled
    correct = probabilities.argmax(axis=1) == oracle
    diagnostics = {
        "temperature": temperature,
        "confident_share": float(confident.sum() / max((~labelled).sum(), 1)),
        "confident_precision": float(correct[confident].mean()) if confident.any() else math.nan,
    }
    view = PoolView(embeddings, probabilities, labelled.copy(), np.where(labelled, oracle, -1))
    return view, diagnostics


def run_online_annotation(
    features: np.ndarray,
    oracle: np.ndarray,
    strategy: AnnotationStrategy,
    schedule: Schedule,
    train: TrainConfig,
    seed: int,
    evaluate: Callable[[torch.nn.Module, Callable[[np.ndarray], torch.Tensor]], float] | None = None,
    desc: str | None = None,
    training: RoundTraining | None = None,
    calibration: Calibration | None = None,
) -> AnnotationRun:
    """Annotate until the budget is spent or the strategy's stop rule fires; record every round.

    The seed set depends only on `seed`, so strategies compared under one seed start from the same labels and
    the same model initialisation. `evaluate(model, scale)` gets the round's model and the input scaling.
    """
    check_schedule(schedule, len(oracle))
    training = training or RoundTraining()
    scale = fit_scaler(features, train)
    inputs, n_classes = scale(features), int(oracle.max()) + 1
    held_out = None if calibration is None else (scale(calibration.features), calibration.labels)
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
        model, mask_rate = fit_round_model(inputs, targets, n_classes, train, training, schedule.min_steps,
                                           seed, seed + round_number)  # fmt: skip
        train_seconds = time.perf_counter() - started
        remaining = strategy.remaining_gain() if round_number else None
        run.records.append(
            RoundRecord(
                round_number, int(labelled.sum()), mask_rate,
                evaluate(model, scale) if evaluate else math.nan,
                math.nan if remaining is None else remaining, stopped,
                select_seconds, train_seconds,
            )
        )  # fmt: skip
        if stopped or labelled.sum() >= schedule.budget:
            break
        started = time.perf_counter()
        view, diagnostics = pool_view(model, inputs, labelled, oracle, held_out)
        strategy.begin_round(view, rng)
        run.records[-1] = replace(run.records[-1], diagnostics={**diagnostics, **strategy.diagnostics()})
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
