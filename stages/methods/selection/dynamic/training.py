"""The reference training loop for a :class:`DynamicSampler`: what any torch loop needs to add is here.

Per epoch: `set_epoch` (scoring, timed apart); the kept samples gathered once in the epoch's shuffled order and
the ones to augment transformed in one vectorised call (timed as `augment_seconds`, part of the training
seconds); then mini-batches, loss weighted per sample, the per-sample losses and embeddings recorded back into
the sampler. Which samples are augmented is `augment`: `none`, `all` kept samples (any method, e.g. random +
augmentation; each with probability `augment_share`), or `plan` (the ones the method routes,
`SelectionMethod.routes_augmentation`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import torch
from torch.nn import functional as F

from stages.core.errors import PipelineError
from stages.core.progress import progress
from stages.methods.selection.dynamic.augment import Augmenter
from stages.methods.selection.dynamic.sampler import DynamicSampler
from stages.models.cnn import SmallCNN
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
    augment_seconds: float
    test_accuracy: float | None


AugmentMode = Literal["none", "all", "plan"]
AUGMENT_MODES = ("none", "all", "plan")


def check_augment_mode(mode: str, sampler: DynamicSampler, key: str = "augment") -> None:
    """`plan` needs a method that routes samples to augmentation; an unknown mode is an error naming `key`."""
    if mode not in AUGMENT_MODES:
        raise PipelineError(f"{key} '{mode}': choose one of {', '.join(AUGMENT_MODES)}")
    if mode == "plan" and not sampler.method.routes_augmentation:
        raise PipelineError(
            f"{key}: plan needs a method that routes samples to augmentation ({sampler.method.name} does not); "
            "use all"
        )


def augment_mask(
    mode: str,
    sampler: DynamicSampler,
    order: torch.Tensor,
    share: float = 1.0,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Which rows of this epoch's `order` get augmented (`all`: each kept row with probability `share`)."""
    if mode == "all":
        if share >= 1.0:
            return torch.ones(len(order), dtype=torch.bool)
        return torch.rand(len(order), generator=generator) < share
    if mode == "plan":
        return sampler.augment_mask(order)
    return torch.zeros(len(order), dtype=torch.bool)


@dataclass(frozen=True)
class Standardize:
    """(x − mean) / std on a batch, applied after augmentation so augmentation works in raw feature units."""

    mean: torch.Tensor
    std: torch.Tensor

    def __call__(self, rows: torch.Tensor) -> torch.Tensor:
        return (rows - self.mean) / self.std


def train_with_sampler(
    model: MLPClassifier | SmallCNN,
    features: torch.Tensor,
    labels: torch.Tensor,
    sampler: DynamicSampler,
    config: TrainConfig,
    standardize: Standardize,
    augmenter: Augmenter | None,
    seed: int,
    evaluate: Callable[[MLPClassifier | SmallCNN], float] | None = None,
    desc: str | None = None,
    augment: AugmentMode = "plan",
    augment_share: float = 1.0,
    evaluate_every_epoch: bool = True,
) -> list[EpochRecord]:
    """Train `model` for `config.epochs` on what `sampler` keeps each epoch; returns one record per epoch.

    With `augment="all"`, each kept sample is augmented with probability `augment_share`. `evaluate` runs
    after every epoch, or only after the last one with `evaluate_every_epoch=False` (the others record None)."""
    check_augment_mode(augment if augmenter is not None else "none", sampler)
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(
        model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    records = []
    epochs = range(config.epochs) if desc is None else progress(range(config.epochs), desc=desc)
    for epoch in epochs:
        plan = sampler.set_epoch(epoch)
        started = time.perf_counter()
        order = torch.from_numpy(sampler.order())
        rows, targets, weights = features[order], labels[order], sampler.loss_weights(order)
        augment_started = time.perf_counter()
        mask = torch.zeros(len(order), dtype=torch.bool)
        if augmenter is not None and augment != "none":
            mask = augment_mask(augment, sampler, order, augment_share, generator)
            augmenter(rows, mask, generator)
        augment_seconds = time.perf_counter() - augment_started
        model.train()
        loss_sum, n_augmented = 0.0, int(mask.sum())
        for batch in torch.arange(len(order)).split(config.batch_size):
            embeddings = model.embed(standardize(rows[batch]))
            per_sample = F.cross_entropy(model.head(embeddings), targets[batch], reduction="none")
            optimizer.zero_grad(set_to_none=True)
            (per_sample * weights[batch]).mean().backward()
            optimizer.step()
            sampler.record(order[batch], per_sample.detach(), embeddings.detach())
            loss_sum += float(per_sample.detach().sum())
        training_seconds = time.perf_counter() - started
        model.eval()
        records.append(
            EpochRecord(
                epoch=epoch,
                n_kept=len(plan.indices),
                n_augmented=n_augmented,
                n_suppressed=len(plan.suppressed),
                mean_loss=loss_sum / max(1, len(plan.indices)),
                scoring_seconds=sampler.scoring_seconds,
                training_seconds=training_seconds,
                augment_seconds=augment_seconds,
                test_accuracy=None
                if evaluate is None or not (evaluate_every_epoch or epoch == config.epochs - 1)
                else evaluate(model),
            )
        )
    return records
