"""Mini-batch training of a classifier on in-memory arrays, with an optional per-sample trace.

The trace logs, for every sample and epoch, the loss, correctness and EL2N error norm from an evaluation pass
over the whole (un-augmented) pool after that epoch, which is what loss-trace selectors such as MRMC, EL2N and
forgetting consume. (A loss taken from the training pass itself would depend on the sample's batch position:
early batches see a less trained model.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from stages.core.progress import progress
from stages.models.augment import BatchAugment, image_shape_of, weak_augment
from stages.models.cnn import SmallCNN
from stages.models.config import TrainConfig
from stages.models.mlp import MLPClassifier
from stages.models.trace import TrainingTrace


@dataclass(frozen=True)
class Standardizer:
    """Per-feature mean/std fitted on the training pool, applied to every split."""

    mean: np.ndarray
    std: np.ndarray

    @classmethod
    def fit(cls, features: np.ndarray) -> Standardizer:
        """Fit on `features` (constant features get std 1)."""
        mean = features.mean(axis=0, dtype=np.float64).astype(np.float32)
        std = features.std(axis=0, dtype=np.float64).astype(np.float32)
        return cls(mean, np.where(std > 1e-6, std, 1.0).astype(np.float32))

    def __call__(self, features: np.ndarray) -> torch.Tensor:
        return torch.from_numpy((features.astype(np.float32, copy=False) - self.mean) / self.std)


@dataclass(frozen=True)
class UnitScaler:
    """One affine map for all features, fitted on the training pool: its minimum → 0 and maximum → 1.

    The CNN's inputs: image rows keep their spatial contrast and land in the [0, 1] range the augmentations assume.
    """

    low: float
    high: float

    @classmethod
    def fit(cls, features: np.ndarray) -> UnitScaler:
        """Fit on `features` (a constant table maps to 0)."""
        low, high = float(features.min()), float(features.max())
        return cls(low, high if high > low else low + 1.0)

    def __call__(self, features: np.ndarray) -> torch.Tensor:
        scaled = (features.astype(np.float32, copy=False) - np.float32(self.low)) / np.float32(
            self.high - self.low
        )
        return torch.from_numpy(np.ascontiguousarray(scaled, dtype=np.float32))


def fit_scaler(features: np.ndarray, config: TrainConfig) -> Standardizer | UnitScaler:
    """The input scaling `config.architecture` expects, fitted on the training pool `features`."""
    return UnitScaler.fit(features) if config.architecture == "cnn" else Standardizer.fit(features)


def build_model(in_dim: int, n_classes: int, config: TrainConfig, seed: int) -> MLPClassifier | SmallCNN:
    """A freshly initialised MLP or CNN (`config.architecture`), initialisation fixed by `seed`."""
    torch.manual_seed(seed)
    if config.architecture == "cnn":
        shape = image_shape_of(in_dim, config.image_shape, "train.image_shape")
        return SmallCNN(shape, config.channels, config.hidden, n_classes)
    return MLPClassifier(in_dim, config.hidden, n_classes)


def batch_augmentation(config: TrainConfig, n_features: int) -> BatchAugment | None:
    """The training-batch augmentation `config.augment` names (None for `none`)."""
    if config.augment == "none":
        return None
    shape = image_shape_of(n_features, config.image_shape, "train.image_shape")
    return weak_augment(shape, config.crop_padding, config.flip)


@torch.no_grad()
def sample_statistics(
    model: nn.Module, inputs: torch.Tensor, labels: torch.Tensor, batch_size: int = 2048
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-sample loss, correctness and EL2N error norm of `model` in eval mode (no augmentation)."""
    was_training = model.training
    model.eval()
    losses, correct, errors = [], [], []
    for start in range(0, len(labels), batch_size):
        logits = model(inputs[start : start + batch_size])
        targets = labels[start : start + batch_size]
        probabilities = logits.softmax(dim=1)
        one_hot = F.one_hot(targets, logits.shape[1]).to(probabilities.dtype)
        losses.append(F.cross_entropy(logits, targets, reduction="none"))
        correct.append(logits.argmax(dim=1) == targets)
        errors.append((probabilities - one_hot).norm(dim=1))
    model.train(was_training)
    return torch.cat(losses).numpy(), torch.cat(correct).numpy(), torch.cat(errors).numpy()


def train_classifier(
    model: nn.Module,
    inputs: torch.Tensor,
    labels: torch.Tensor,
    config: TrainConfig,
    seed: int,
    record_trace: bool = False,
    desc: str | None = None,
) -> TrainingTrace | None:
    """Train `model` with Adam for `config.epochs`; shuffling and augmentation fixed by `seed`.

    Batches get `config.augment`. With `record_trace`, every sample's statistics are logged by an evaluation pass
    after each epoch and returned. `desc` shows a per-epoch progress bar with that label (leave it None inside an
    outer loop's bar).
    """
    generator = torch.Generator().manual_seed(seed)
    augment_generator = torch.Generator().manual_seed(seed + 1_000_003)
    augment = batch_augmentation(config, inputs.shape[1])
    optimizer = torch.optim.Adam(
        model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    n_samples = len(labels)
    trace_shape = (n_samples, config.epochs)
    loss_log = np.zeros(trace_shape, np.float32) if record_trace else None
    correct_log = np.zeros(trace_shape, bool) if record_trace else None
    error_log = np.zeros(trace_shape, np.float32) if record_trace else None
    model.train()
    epochs = range(config.epochs) if desc is None else progress(range(config.epochs), desc=desc)
    for epoch in epochs:
        order = torch.randperm(n_samples, generator=generator)
        for start in range(0, n_samples, config.batch_size):
            batch = order[start : start + config.batch_size]
            batch_inputs = inputs[batch] if augment is None else augment(inputs[batch], augment_generator)
            loss = F.cross_entropy(model(batch_inputs), labels[batch])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        if record_trace:
            loss_log[:, epoch], correct_log[:, epoch], error_log[:, epoch] = sample_statistics(
                model, inputs, labels
            )
    model.eval()
    if not record_trace:
        return None
    return TrainingTrace(loss=loss_log, correct=correct_log, error_norm=error_log)


@torch.no_grad()
def predict(model: nn.Module, inputs: torch.Tensor, batch_size: int = 4096) -> np.ndarray:
    """Predicted class per row."""
    model.eval()
    return torch.cat(
        [model(inputs[i : i + batch_size]).argmax(1) for i in range(0, len(inputs), batch_size)]
    ).numpy()


@torch.no_grad()
def embed(model: MLPClassifier | SmallCNN, inputs: torch.Tensor, batch_size: int = 4096) -> np.ndarray:
    """Penultimate-layer embeddings per row."""
    model.eval()
    return torch.cat(
        [model.embed(inputs[i : i + batch_size]) for i in range(0, len(inputs), batch_size)]
    ).numpy()
