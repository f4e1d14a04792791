"""FixMatch (Sohn et al., NeurIPS 2020) for any classifier on flat image rows.

Each step draws a labelled batch of B images and an unlabelled batch of μB images. The labelled loss is the
cross-entropy of the weakly augmented labelled images; the unlabelled loss is the cross-entropy of the strongly
augmented unlabelled images against the arg-max of the model's own (detached) prediction on their weak views,
counted only where that prediction's confidence reaches τ, averaged over all μB images as in the paper. The
step minimises `labelled + λ_u · unlabelled`; all three views go through the model in one forward pass (so
batch-norm statistics see them together, as in the reference implementation).

Views come from `stages.models.augment`: weak = flip + crop, strong = flip + crop + RandAugment-style ops +
cutout. Settings: :class:`stages.models.fixmatch_config.FixMatchConfig`. Starting from a model already trained
on the labelled rows (a *fresh teacher*) means its first pseudo-labels come from a model that saw every
current label.

As in the paper, an exponential moving average of the weights (decay `ema_decay`, 0.999 in FixMatch; batch-norm
statistics copied from the trained model) is kept beside the trained model, and it is what the run hands back:
:func:`train_fixmatch` loads the averaged weights into the model at the end. Pseudo-labels come from the
trained model's weak views (FixMatch, Algorithm 1) or, with `pseudo_labels_from: ema`, from the average
(a mean-teacher variant).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from stages.core.errors import PipelineError
from stages.models.augment import strong_augment, weak_augment
from stages.models.fixmatch_config import FixMatchConfig


@dataclass(frozen=True)
class FixMatchLosses:
    """One step's pieces: the labelled and unlabelled losses and the share of unlabelled images masked in."""

    labelled: torch.Tensor
    unlabelled: torch.Tensor
    mask_rate: float

    def total(self, unlabelled_weight: float) -> torch.Tensor:
        """`labelled + λ_u · unlabelled`."""
        return self.labelled + unlabelled_weight * self.unlabelled


@dataclass(frozen=True)
class FixMatchStats:
    """What a FixMatch run did: steps, the mean share of unlabelled images above τ, the last step's losses."""

    steps: int
    mean_mask_rate: float
    labelled_loss: float
    unlabelled_loss: float


def unlabelled_batch_size(batch_size: int, mu: int, n_unlabelled: int) -> int:
    """μB, capped at the number of unlabelled rows."""
    return min(mu * batch_size, n_unlabelled)


def pseudo_labels(weak_logits: torch.Tensor, threshold: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Arg-max classes of the weak views and the mask `max softmax ≥ τ` (both without gradient)."""
    probabilities = weak_logits.detach().softmax(dim=1)
    confidence, classes = probabilities.max(dim=1)
    return classes, (confidence >= threshold).to(weak_logits.dtype)


def fixmatch_losses(
    model: nn.Module,
    labelled: torch.Tensor,
    labels: torch.Tensor,
    weak: torch.Tensor,
    strong: torch.Tensor,
    threshold: float,
    teacher: nn.Module | None = None,
) -> FixMatchLosses:
    """Labelled and unlabelled losses of one step (`weak` and `strong` are two views of the same rows).

    Without a `teacher` the model pseudo-labels its own weak views (one forward pass over all three views);
    with one, the teacher (in eval mode, no gradient) pseudo-labels them and the model sees the other two.
    """
    if len(weak) != len(strong):
        raise ValueError(f"weak and strong views differ in size: {len(weak)} vs {len(strong)}")
    if teacher is None:
        logits = model(torch.cat([labelled, weak, strong]))
        labelled_logits = logits[: len(labelled)]
        weak_logits, strong_logits = logits[len(labelled) :].split(len(weak))
    else:
        logits = model(torch.cat([labelled, strong]))
        labelled_logits, strong_logits = logits[: len(labelled)], logits[len(labelled) :]
        with torch.no_grad():
            weak_logits = teacher(weak)
    targets, mask = pseudo_labels(weak_logits, threshold)
    unlabelled = (F.cross_entropy(strong_logits, targets, reduction="none") * mask).mean()
    return FixMatchLosses(F.cross_entropy(labelled_logits, labels), unlabelled, float(mask.mean()))


class WeightAverage:
    """An exponential moving average of a model's parameters; buffers (batch-norm statistics) are copied."""

    def __init__(self, model: nn.Module, decay: float) -> None:
        self.decay = decay
        self.model = copy.deepcopy(model).eval()
        self.model.requires_grad_(False)

    @torch.no_grad()
    def update(self, model: nn.Module) -> None:
        """`average ← decay · average + (1 − decay) · weights`; buffers ← the model's."""
        for average, weights in zip(self.model.parameters(), model.parameters(), strict=True):
            average.lerp_(weights.detach(), 1.0 - self.decay)
        for average, buffer in zip(self.model.buffers(), model.buffers(), strict=True):
            average.copy_(buffer)


def cycling_batches(n_rows: int, size: int, generator: torch.Generator) -> Iterator[torch.Tensor]:
    """Endless batches of `size` row indices: consecutive random permutations of `n_rows`, cut into batches."""
    if n_rows < 1:
        raise PipelineError("FixMatch needs at least one row to draw batches from")
    buffer = torch.zeros(0, dtype=torch.int64)
    while True:
        while len(buffer) < size:
            buffer = torch.cat([buffer, torch.randperm(n_rows, generator=generator)])
        yield buffer[:size]
        buffer = buffer[size:]


def train_fixmatch(
    model: nn.Module,
    labelled_inputs: torch.Tensor,
    labels: torch.Tensor,
    unlabelled_inputs: torch.Tensor,
    image_shape: tuple[int, int, int],
    config: FixMatchConfig,
    seed: int,
) -> FixMatchStats:
    """Train `model` in place for `config.steps` FixMatch steps with Adam; batches and views fixed by `seed`.

    At the end the model holds the EMA of its weights over the steps (`config.ema_decay`), as FixMatch
    evaluates. Rows are flat images in [0, 1] of `image_shape` (C, H, W). Without unlabelled rows (or with 0
    steps) the model is returned untouched.
    """
    if config.steps == 0 or len(unlabelled_inputs) == 0:
        return FixMatchStats(0, 0.0, float("nan"), float("nan"))
    weak = weak_augment(image_shape, config.crop_padding, config.flip)
    strong = strong_augment(image_shape, config.crop_padding, config.flip, config.strong_ops,
                            config.strong_magnitude, config.cutout)  # fmt: skip
    generator = torch.Generator().manual_seed(seed)
    augment_generator = torch.Generator().manual_seed(seed + 1_000_003)
    labelled_batches = cycling_batches(len(labels), min(config.batch_size, len(labels)), generator)
    size = unlabelled_batch_size(config.batch_size, config.mu, len(unlabelled_inputs))
    unlabelled_batches = cycling_batches(len(unlabelled_inputs), size, generator)
    optimizer = torch.optim.Adam(
        model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    average = WeightAverage(model, config.ema_decay)
    teacher = average.model if config.pseudo_labels_from == "ema" else None
    model.train()
    mask_total, losses = 0.0, None
    for _ in range(config.steps):
        rows, unlabelled_rows = next(labelled_batches), next(unlabelled_batches)
        unlabelled = unlabelled_inputs[unlabelled_rows]
        losses = fixmatch_losses(
            model, weak(labelled_inputs[rows], augment_generator), labels[rows],
            weak(unlabelled, augment_generator), strong(unlabelled, augment_generator), config.threshold,
            teacher,
        )  # fmt: skip
        optimizer.zero_grad(set_to_none=True)
        losses.total(config.unlabelled_weight).backward()
        optimizer.step()
        average.update(model)
        mask_total += losses.mask_rate
    model.load_state_dict(average.model.state_dict())
    model.eval()
    return FixMatchStats(
        config.steps,
        mask_total / config.steps,
        float(losses.labelled.detach()),
        float(losses.unlabelled.detach()),
    )
