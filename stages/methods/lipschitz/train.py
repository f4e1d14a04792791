"""Training and evaluating certifiably robust nets (SGD + momentum, step learning-rate schedule as the
LipConvNet code's default), with the LA or CE + CR loss; the memory a forward pass saves for backward."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
from torch import nn

from stages.methods.lipschitz.certify import (
    EPSILONS,
    average_certified_radius,
    certified_accuracy,
    lln_radius,
    ortho_radius,
)
from stages.methods.lipschitz.losses import ce_cr_loss, logit_annealing_loss
from stages.methods.lipschitz.nets import LipConvNet

Loss = Literal["la", "ce_cr", "ce"]


@dataclass(frozen=True)
class TrainOptions:
    """The run: loss and its constants, optimiser, epochs, batch."""

    loss: Loss = "la"
    epochs: int = 4
    batch: int = 128
    optimizer: Literal["sgd", "adam"] = "sgd"
    lr: float = 0.1
    momentum: float = 0.9
    weight_decay: float = 3e-4
    temperature: float = 0.75
    offset: float = 2.0
    beta: float = 5.0
    alpha: float = 0.25
    gamma: float = 0.5


def radii_of(
    model: nn.Module, logits: torch.Tensor, classes: torch.Tensor, lipschitz: float = 1.0
) -> torch.Tensor:
    """LLN radii when the model ends in an LLN layer (LipConvNet), else the orthogonal-last-layer radii."""
    if isinstance(model, LipConvNet):
        return lln_radius(logits, classes, model.last.normalized_weight(), lipschitz)
    return ortho_radius(logits, classes, lipschitz)


def loss_of(
    model: nn.Module, logits: torch.Tensor, labels: torch.Tensor, options: TrainOptions
) -> torch.Tensor:
    if options.loss == "la":
        return logit_annealing_loss(
            logits, labels, options.temperature, options.offset, options.beta, options.alpha
        )
    if options.loss == "ce":
        return nn.functional.cross_entropy(logits, labels)
    lipschitz = model.config.input_lipschitz if isinstance(model, LipConvNet) else 1.0
    return ce_cr_loss(logits, labels, radii_of(model, logits, labels, lipschitz), options.gamma)


def train(
    model: nn.Module, images: torch.Tensor, labels: torch.Tensor, options: TrainOptions, seed: int
) -> list[float]:
    """Train in place; the batch order is drawn from `seed`. Returns the mean loss of each epoch."""
    generator = torch.Generator().manual_seed(seed)
    if options.optimizer == "sgd":
        optimizer = torch.optim.SGD(
            model.parameters(), lr=options.lr, momentum=options.momentum, weight_decay=options.weight_decay
        )
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=options.lr, weight_decay=options.weight_decay)
    steps_per_epoch = -(-len(images) // options.batch)
    total = steps_per_epoch * options.epochs
    schedule = torch.optim.lr_scheduler.MultiStepLR(optimizer, [total // 2, 3 * total // 4], gamma=0.1)
    losses = []
    model.train()
    for _ in range(options.epochs):
        order = torch.randperm(len(images), generator=generator)
        running = 0.0
        for start in range(0, len(images), options.batch):
            rows = order[start : start + options.batch]
            loss = loss_of(model, model(images[rows]), labels[rows], options)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            schedule.step()
            running += float(loss.detach()) * len(rows)
        losses.append(running / len(images))
    model.eval()
    return losses


@dataclass(frozen=True)
class Evaluation:
    """Per test point: prediction, correctness and certified radius (w.r.t. the prediction), and the radius
    w.r.t. the true label (negative when misclassified)."""

    predictions: np.ndarray
    correct: np.ndarray
    radii: np.ndarray
    label_radii: np.ndarray
    lipschitz: float

    def summary(self, epsilons=EPSILONS) -> dict[str, float]:
        certified = certified_accuracy(self.correct, self.radii, epsilons)
        return {
            "clean": float(self.correct.mean()),
            **{f"cert_{round(eps * 255)}": value for eps, value in zip(epsilons, certified, strict=True)},
            "acr": average_certified_radius(self.correct, self.radii),
        }


@torch.no_grad()
def evaluate(model: nn.Module, images: torch.Tensor, labels: torch.Tensor, batch: int = 1000) -> Evaluation:
    """Predictions and certificates of every test point (model in eval mode)."""
    model.eval()
    lipschitz = model.lipschitz() if isinstance(model, LipConvNet) else 1.0
    logits = torch.cat([model(images[i : i + batch]) for i in range(0, len(images), batch)])
    predictions = logits.argmax(1)
    return Evaluation(
        predictions=predictions.numpy(),
        correct=(predictions == labels).numpy(),
        radii=radii_of(model, logits, predictions, lipschitz).numpy().astype(np.float64),
        label_radii=radii_of(model, logits, labels, lipschitz).numpy().astype(np.float64),
        lipschitz=lipschitz,
    )


def saved_bytes(module: nn.Module, x: torch.Tensor) -> int:
    """Bytes of the tensors autograd saves for backward in one training forward of `module` on `x`: the
    activation memory of a training step (deterministic, unlike peak RSS)."""
    total = 0

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        nonlocal total
        total += tensor.numel() * tensor.element_size()
        return tensor

    module.train()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        module(x.requires_grad_(True)).sum()
    return total
