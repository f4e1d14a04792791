"""The reference training loop for a :class:`DynamicSampler`: what any torch loop needs to add is here.

Per epoch: `set_epoch` (scoring, timed apart), then mini-batches of the kept samples, augmented where the plan
says, loss weighted per sample, and the per-sample losses and embeddings recorded back into the sampler.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.nn import functional as F

from stages.core.progress import progress
from stages.methods.selection.dynamic.augment import Augmenter
from stages.methods.selection.dynamic.sampler import DynamicSampler
from stages.models.mlp import MLPClassifier
from stages.models.training import TrainConfig


@dataclass(frozen=True)
class EpochRecord:
    """One epoch of a run: what was selected and how long scoring and training took."""

    epoch: int
    n_kept: int
    n_augmented: int
    n_suppressed: int
    mean_loss: float
    scoring_seconds: float
    training_seconds: float
    test_accuracy: float | None


@dataclass(frozen=True)
class Standardize:
    """(x − mean) / std on a batch, applied after augmentation so augmentation works in raw feature units."""

    mean: torch.Tensor
    std: torch.Tensor

    def __call__(self, rows: torch.Tensor) -> torch.Tensor:
        return (rows - self.mean) / self.std


def train_with_sampler(
    model: MLPClassifier,
    features: torch.Tensor,
    labels: torch.Tensor,
    sampler: DynamicSampler,
    config: TrainConfig,
    standardize: Standardize,
    augmenter: Augmenter | None,
    seed: int,
    evaluate: Callable[[MLPClassifier], float] | None = None,
    desc: str | None = None,
) -> list[EpochRecord]:
    """Train `model` for `config.epochs` on what `sampler` keeps each epoch; returns one record per epoch."""
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(
        model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    records = []
    epochs = range(config.epochs) if desc is None else progress(range(config.epochs), desc=desc)
    for epoch in epochs:
        plan = sampler.set_epoch(epoch)
        started = time.perf_counter()
        model.train()
        loss_sum = 0.0
        for batch in sampler.batches(config.batch_size):
            rows = features[batch]
            if augmenter is not None:
                rows = augmenter(rows, sampler.augment_mask(batch), generator)
            embeddings = model.embed(standardize(rows))
            per_sample = F.cross_entropy(model.head(embeddings), labels[batch], reduction="none")
            optimizer.zero_grad(set_to_none=True)
            (per_sample * sampler.loss_weights(batch)).mean().backward()
            optimizer.step()
            sampler.record(batch, per_sample.detach(), embeddings.detach())
            loss_sum += float(per_sample.detach().sum())
        training_seconds = time.perf_counter() - started
        model.eval()
        records.append(
            EpochRecord(
                epoch=epoch,
                n_kept=len(plan.indices),
                n_augmented=plan.n_augmented,
                n_suppressed=len(plan.suppressed),
                mean_loss=loss_sum / max(1, len(plan.indices)),
                scoring_seconds=sampler.scoring_seconds,
                training_seconds=training_seconds,
                test_accuracy=None if evaluate is None else evaluate(model),
            )
        )
    return records
