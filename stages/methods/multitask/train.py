"""Single-task, multitask and few-shot multi-label training of the ECG encoder (BCE, Adam).

Every regime trains for the same number of gradient steps at the same batch size, learning rate and weight decay,
and keeps the checkpoint with the best validation macro AUROC (checked every `eval_every` steps); the multitask
model is selected on the mean of its per-site validation AUROCs, a single-task model on its own site's. Batches
are drawn by a seeded generator, so the same seed gives the same batches and initialisation.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from stages.methods.multitask.encoder import Classifier, ECGEncoder, EncoderConfig
from stages.methods.multitask.metrics import macro_auroc


@dataclass(frozen=True)
class TrainOptions:
    """Gradient steps, batch size, Adam's learning rate and weight decay, validation cadence."""

    steps: int = 300
    batch: int = 32
    lr: float = 1e-3
    weight_decay: float = 1e-3
    eval_every: int = 50

    def __post_init__(self) -> None:
        if self.steps < 1 or self.batch < 1 or self.eval_every < 1:
            raise ValueError(f"steps, batch and eval_every must be ≥ 1, got {self}")
        if not (np.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"lr must be a finite number > 0, got {self.lr}")


@dataclass
class SiteData:
    """One site's normalised records [n × leads × samples] and multi-hot labels [n × classes]."""

    x: np.ndarray
    y: np.ndarray


def predict(model: nn.Module, x: np.ndarray, batch: int = 256) -> np.ndarray:
    """Sigmoid scores [n × classes]."""
    model.eval()
    out = []
    with torch.no_grad():
        for start in range(0, len(x), batch):
            out.append(torch.sigmoid(model(torch.from_numpy(x[start : start + batch]))).numpy())
    return np.concatenate(out) if out else np.zeros((0, 0), dtype=np.float32)


def embed(encoder: ECGEncoder, x: np.ndarray, batch: int = 256, tokens: bool = False) -> np.ndarray:
    """Pooled embeddings [n × dim] (or tokens [n × time × width]) of a frozen encoder."""
    encoder.eval()
    out = []
    with torch.no_grad():
        for start in range(0, len(x), batch):
            chunk = torch.from_numpy(x[start : start + batch])
            out.append((encoder.tokens(chunk) if tokens else encoder(chunk)).numpy())
    return np.concatenate(out)


def _validation_score(model: nn.Module, validation: Mapping[str, SiteData], classes: Sequence[str]) -> float:
    scores = [macro_auroc(predict(model, data.x), data.y, classes) for data in validation.values()]
    scores = [s for s in scores if np.isfinite(s)]
    return float(np.mean(scores)) if scores else float("-inf")


def fit(
    model: nn.Module,
    train: Mapping[str, SiteData],
    validation: Mapping[str, SiteData] | None,
    classes: Sequence[str],
    options: TrainOptions,
    seed: int,
) -> tuple[nn.Module, dict]:
    """Train `model` on the pooled records of `train` (uniform over records) for `options.steps` steps; return
    the best checkpoint on `validation` (the last one without validation) and a log."""
    x = np.concatenate([data.x for data in train.values()])
    y = np.concatenate([data.y for data in train.values()])
    rng = np.random.default_rng(seed)
    optimiser = torch.optim.Adam(model.parameters(), lr=options.lr, weight_decay=options.weight_decay)
    loss_fn = nn.BCEWithLogitsLoss()
    best, best_score, best_step, curve = None, float("-inf"), options.steps, []
    batch = min(options.batch, len(x))
    for step in range(1, options.steps + 1):
        model.train()
        index = rng.choice(len(x), size=batch, replace=False)
        loss = loss_fn(model(torch.from_numpy(x[index])), torch.from_numpy(y[index]))
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        if validation and (step % options.eval_every == 0 or step == options.steps):
            score = _validation_score(model, validation, classes)
            curve.append((step, score))
            if score > best_score:
                best, best_score, best_step = copy.deepcopy(model.state_dict()), score, step
    if best is not None:
        model.load_state_dict(best)
    model.eval()
    return model, {
        "best_step": best_step,
        "validation": best_score,
        "curve": curve,
        "samples": options.steps * batch,
    }


def new_classifier(config: EncoderConfig, classes: int, seed: int) -> Classifier:
    """A freshly initialised encoder + head (seeded)."""
    torch.manual_seed(seed)
    return Classifier(ECGEncoder(config), classes)


def train_single_task(
    site: str,
    train: Mapping[str, SiteData],
    validation: Mapping[str, SiteData],
    classes: Sequence[str],
    config: EncoderConfig,
    options: TrainOptions,
    seed: int,
) -> tuple[Classifier, dict]:
    """One model on one site's records, selected on that site's validation split."""
    model = new_classifier(config, len(classes), seed)
    return fit(model, {site: train[site]}, {site: validation[site]}, classes, options, seed)


def train_multitask(
    train: Mapping[str, SiteData],
    validation: Mapping[str, SiteData],
    classes: Sequence[str],
    config: EncoderConfig,
    options: TrainOptions,
    seed: int,
) -> tuple[Classifier, dict]:
    """One model on every site's records jointly (head over the union label set), selected on the mean of the
    per-site validation AUROCs."""
    model = new_classifier(config, len(classes), seed)
    return fit(model, train, validation, classes, options, seed)


def k_shot_indices(labels: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k records per class (a record counts for each of its labels; drawn without replacement per class; a class
    with fewer than k records gives all it has)."""
    chosen: list[int] = []
    for column in range(labels.shape[1]):
        pool = np.setdiff1d(np.flatnonzero(labels[:, column] > 0), chosen)
        take = rng.choice(pool, size=min(k, len(pool)), replace=False) if len(pool) else []
        chosen += [int(i) for i in take]
    return np.array(sorted(chosen), dtype=np.int64)


def fine_tune(
    encoder_state: Mapping[str, torch.Tensor] | None,
    config: EncoderConfig,
    x: np.ndarray,
    y: np.ndarray,
    options: TrainOptions,
    seed: int,
) -> Classifier:
    """Few-shot fine-tuning: the encoder from `encoder_state` (None: scratch) and a new head over y's classes,
    all trained for `options.steps` steps (no validation: few-shot leaves none)."""
    model = new_classifier(config, y.shape[1], seed)
    if encoder_state is not None:
        model.encoder.load_state_dict(encoder_state)
    model, _ = fit(model, {"shots": SiteData(x, y)}, None, (), options, seed)
    return model
