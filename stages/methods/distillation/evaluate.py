"""The evaluation protocol: a fresh PointNet trained on a (distilled) set and tested on real clouds.

Adam (lr 1e-3, weight decay 5e-4), cosine to 1e-4, per batch random scale [0.8, 1.25], jitter (σ 0.01,
clipped 0.05) and a small rotation (σ 0.06 rad, clipped 0.18) per cloud. Reported: the final-epoch overall
accuracy and, as the reference code reports it, the maximum test accuracy over the checked epochs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from stages.methods.distillation.pointnet import PointNet


@dataclass(frozen=True)
class EvalOptions:
    """A fresh PointNet's training on a set (the card: 200 epochs at paper scale)."""

    epochs: int = 100
    lr: float = 1e-3
    weight_decay: float = 5e-4
    lr_min: float = 1e-4
    batch: int = 256
    widths: tuple[int, ...] = (64, 128, 256)
    flip_w0: float | None = None
    check_every: int = 10  # test accuracy every k epochs for the maximum (the final epoch always)
    augment: bool = True


@dataclass(frozen=True)
class EvalResult:
    final_accuracy: float
    max_accuracy: float
    per_class_final: list[float]


def small_rotations(
    count: int, generator: torch.Generator, sigma: float = 0.06, clip: float = 0.18
) -> torch.Tensor:
    """Rotation matrices Rz·Ry·Rx with clipped Gaussian angles (the reference's perturbation)."""
    a = (torch.randn((count, 3), generator=generator) * sigma).clamp(-clip, clip)
    c, s = a.cos(), a.sin()
    one, zero = torch.ones(count), torch.zeros(count)
    rx = torch.stack([one, zero, zero, zero, c[:, 0], -s[:, 0], zero, s[:, 0], c[:, 0]], 1).view(-1, 3, 3)
    ry = torch.stack([c[:, 1], zero, s[:, 1], zero, one, zero, -s[:, 1], zero, c[:, 1]], 1).view(-1, 3, 3)
    rz = torch.stack([c[:, 2], -s[:, 2], zero, s[:, 2], c[:, 2], zero, zero, zero, one], 1).view(-1, 3, 3)
    return rz @ ry @ rx


def augment(points: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Random scale, jitter and small rotation of clouds (b × n × 3)."""
    b = len(points)
    scale = torch.empty((b, 1, 1)).uniform_(0.8, 1.25, generator=generator)
    jitter = (torch.randn(points.shape, generator=generator) * 0.01).clamp(-0.05, 0.05)
    return (points * scale + jitter) @ small_rotations(b, generator).transpose(1, 2)


def predict(net: nn.Module, points: torch.Tensor, batch: int = 512) -> torch.Tensor:
    """Predicted classes of clouds, in batches, without gradients."""
    net.eval()
    with torch.no_grad():
        return torch.cat([net(points[i : i + batch]).argmax(1) for i in range(0, len(points), batch)])


def train_and_test(
    train_points: np.ndarray,
    train_labels: np.ndarray,
    test_points: np.ndarray,
    test_labels: np.ndarray,
    classes: int,
    options: EvalOptions,
    seed: int,
) -> EvalResult:
    """Train a fresh PointNet on the train set, test it on the test set (deterministic for a seed)."""
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    net = PointNet(classes, options.widths, options.flip_w0)
    optimizer = torch.optim.Adam(net.parameters(), lr=options.lr, weight_decay=options.weight_decay)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, options.epochs, eta_min=options.lr_min)
    x, y = torch.as_tensor(train_points, dtype=torch.float32), torch.as_tensor(train_labels, dtype=torch.long)
    test_x = torch.as_tensor(test_points, dtype=torch.float32)
    test_y = torch.as_tensor(test_labels, dtype=torch.long)
    best = 0.0
    for epoch in range(1, options.epochs + 1):
        net.train()
        order = torch.randperm(len(x), generator=generator)
        for start in range(0, len(x), options.batch):
            rows = order[start : start + options.batch]
            batch = augment(x[rows], generator) if options.augment else x[rows]
            loss = nn.functional.cross_entropy(net(batch), y[rows])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        schedule.step()
        if epoch % options.check_every == 0 or epoch == options.epochs:
            predicted = predict(net, test_x)
            best = max(best, float((predicted == test_y).float().mean()))
    correct = (predicted == test_y).float()
    per_class = [
        float(correct[test_y == c].mean()) if (test_y == c).any() else float("nan") for c in range(classes)
    ]
    return EvalResult(float(correct.mean()), best, per_class)
