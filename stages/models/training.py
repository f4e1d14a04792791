"""Mini-batch training of a classifier on in-memory arrays, with an optional per-sample trace.

The trace logs, for every sample and epoch, the loss, correctness and EL2N error norm of the forward pass the
sample had in that epoch's training (no extra pass), which is what loss-trace selectors such as MRMC,
EL2N and forgetting consume.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from stages.core.progress import progress
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


def build_model(in_dim: int, n_classes: int, config: TrainConfig, seed: int) -> MLPClassifier:
    """A freshly initialised MLP, initialisation fixed by `seed`."""
    torch.manual_seed(seed)
    return MLPClassifier(in_dim, config.hidden, n_classes)


def train_classifier(
    model: nn.Module,
    inputs: torch.Tensor,
    labels: torch.Tensor,
    config: TrainConfig,
    seed: int,
    record_trace: bool = False,
    desc: str | None = None,
) -> TrainingTrace | None:
    """Train `model` with Adam for `config.epochs`; shuffling fixed by `seed`. Returns the trace if asked.

    `desc` shows a per-epoch progress bar with that label (leave it None inside an outer loop's bar).
    """
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(
        model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    n_samples = len(labels)
    trace_shape = (n_samples, config.epochs)
    loss_log = np.zeros(trace_shape, np.float32) if record_trace else None
    correct_log = np.zeros(trace_shape, bool) if record_trace else None
    error_log = np.zeros(trace_shape, np.float32) if record_trace else None
    n_classes = None
    model.train()
    epochs = range(config.epochs) if desc is None else progress(range(config.epochs), desc=desc)
    for epoch in epochs:
        order = torch.randperm(n_samples, generator=generator)
        for start in range(0, n_samples, config.batch_size):
            batch = order[start : start + config.batch_size]
            logits = model(inputs[batch])
            per_sample = F.cross_entropy(logits, labels[batch], reduction="none")
            optimizer.zero_grad(set_to_none=True)
            per_sample.mean().backward()
            optimizer.step()
            if record_trace:
                with torch.no_grad():
                    n_classes = n_classes or logits.shape[1]
                    probabilities = logits.softmax(dim=1)
                    one_hot = F.one_hot(labels[batch], n_classes).to(probabilities.dtype)
                    index = batch.numpy()
                    loss_log[index, epoch] = per_sample.detach().numpy()
                    correct_log[index, epoch] = (logits.argmax(dim=1) == labels[batch]).numpy()
                    error_log[index, epoch] = (probabilities - one_hot).norm(dim=1).numpy()
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
def embed(model: MLPClassifier, inputs: torch.Tensor, batch_size: int = 4096) -> np.ndarray:
    """Penultimate-layer embeddings per row."""
    model.eval()
    return torch.cat(
        [model.embed(inputs[i : i + batch_size]) for i in range(0, len(inputs), batch_size)]
    ).numpy()
