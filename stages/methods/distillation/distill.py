"""DD3D's distillation loop and its baselines on clouds (N × n × 3) with labels 0..C−1.

Per iteration a fresh PointNet; `outer_loop` times: the summed per-class matching losses (`batch_real` real
clouds against the class's `cpc` synthetic ones) take one Adam step on the synthetic parameters, then (except
after the last) the network trains `inner_loop` epochs of SGD on the current synthetic set. The synthetic
parameters are the SIREN generator (DD3D) or the coordinates themselves (fixed-xyz DC, initialised from real
clouds). Adam lr ×0.1 at half the iterations; the network's SGD lr ×0.1 at half its inner steps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import torch
from torch import nn

from stages.core.progress import progress
from stages.methods.distillation.generator import PointGenerator
from stages.methods.distillation.matching import batched_gradient_match, gradient_match
from stages.methods.distillation.pointnet import PointNet
from stages.methods.distillation.rotator import normalise_unit_sphere

Synthesis = Literal["generator", "xyz"]


@dataclass(frozen=True)
class DistillOptions:
    """The card's knobs (ModelNet40 values in the comments)."""

    cpc: int = 1
    iterations: int = 40  # 400
    outer_loop: int = 5  # 5 / 20 / 40 for cpc 1 / 10 / 50
    inner_loop: int = 5  # 5 / 10 / 5
    batch_real: int = 16  # 32
    points: int = 256  # distillation resolution (1,024)
    widths: tuple[int, ...] = (64, 128, 256)  # (64, 128, 1024)
    flip_w0: float | None = None  # the rotator's sign flip in the network (None: off)
    lr: float = 1e-3
    weight_decay: float = 5e-4
    lr_net: float = 1e-3
    hidden: int = 256
    layers: int = 2
    w0_first: float = 100.0  # 50 ScanObjectNN
    synthesis: Synthesis = "generator"


@dataclass
class Distilled:
    """The result: the trained generator (or coordinates), the per-iteration matching loss, and the bytes
    autograd saved for backward during the first outer step (the activation memory that scales with points)."""

    labels: np.ndarray
    generator: PointGenerator | None
    coordinates: torch.Tensor | None
    losses: list[float] = field(default_factory=list)
    saved_bytes: int = 0

    def clouds(self, points: int, seed: int) -> np.ndarray:
        """The distilled clouds at `points` points, normalised to the unit sphere (coordinates: resampled with
        replacement when `points` exceeds their count)."""
        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            if self.generator is not None:
                x = self.generator.draw(torch.arange(len(self.labels)), points, generator)
            else:
                assert self.coordinates is not None
                have = self.coordinates.shape[1]
                index = (
                    torch.randint(have, (points,), generator=generator)
                    if points > have
                    else torch.arange(points)
                )
                x = self.coordinates[:, index]
            return normalise_unit_sphere(x).numpy().astype(np.float32)


class SavedBytes:
    """Counts the bytes of the tensors autograd saves for backward while active (class-by-class matching)."""

    def __init__(self) -> None:
        self.total = 0

    def pack(self, tensor: torch.Tensor) -> torch.Tensor:
        self.total += tensor.numel() * tensor.element_size()
        return tensor

    def hooks(self):
        return torch.autograd.graph.saved_tensors_hooks(self.pack, lambda tensor: tensor)


def class_index(labels: np.ndarray) -> list[np.ndarray]:
    """Row indices of each class 0..C−1; a class without rows is an error naming it."""
    classes = int(labels.max()) + 1
    rows = [np.flatnonzero(labels == c) for c in range(classes)]
    empty = [c for c, r in enumerate(rows) if len(r) == 0]
    if empty:
        raise ValueError(f"classes without clouds: {empty}")
    return rows


def real_batch(
    clouds: np.ndarray, rows: np.ndarray, options: DistillOptions, rng: np.random.Generator
) -> torch.Tensor:
    """`batch_real` clouds of one class, subsampled to `options.points` points (then renormalised, as the
    reference does when it subsamples)."""
    picked = clouds[rng.permutation(rows)[: options.batch_real]]
    if options.points < clouds.shape[1]:
        picked = picked[:, rng.permutation(clouds.shape[1])[: options.points]]
        return normalise_unit_sphere(torch.as_tensor(picked, dtype=torch.float32))
    return torch.as_tensor(picked, dtype=torch.float32)


def initial_coordinates(
    clouds: np.ndarray, by_class: list[np.ndarray], options: DistillOptions, rng: np.random.Generator
) -> torch.Tensor:
    """Fixed-xyz DC's start: `cpc` random real clouds per class at `options.points` points (class-major)."""
    picked = []
    for rows in by_class:
        chosen = clouds[rng.choice(rows, options.cpc, replace=len(rows) < options.cpc)]
        picked.append(chosen[:, rng.permutation(clouds.shape[1])[: options.points]])
    return normalise_unit_sphere(torch.as_tensor(np.concatenate(picked), dtype=torch.float32))


def distill(
    clouds: np.ndarray,
    labels: np.ndarray,
    options: DistillOptions,
    seed: int,
    on_iteration: Callable[[int, Distilled], None] | None = None,
) -> Distilled:
    """Distil (clouds, labels) into `cpc` synthetic clouds per class (deterministic for a seed).

    `on_iteration(i, result)` runs after iteration i (0-based) with the live result, e.g. to draw a snapshot
    of the set with `result.clouds` (which consumes no randomness of the distillation)."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    noise = torch.Generator().manual_seed(seed + 1)
    by_class = class_index(labels)
    classes = len(by_class)
    synthetic_labels = np.repeat(np.arange(classes), options.cpc)
    generator = coordinates = None
    if options.synthesis == "generator":
        generator = PointGenerator(classes * options.cpc, options.hidden, options.layers, options.w0_first)
        parameters = list(generator.parameters())
    else:
        coordinates = initial_coordinates(clouds, by_class, options, rng).requires_grad_(True)
        parameters = [coordinates]
    optimizer = torch.optim.Adam(parameters, lr=options.lr, weight_decay=options.weight_decay)
    schedule = torch.optim.lr_scheduler.StepLR(
        optimizer, step_size=max(1, options.iterations // 2), gamma=0.1
    )
    result = Distilled(synthetic_labels, generator, coordinates)

    def synthetic(indices: torch.Tensor) -> torch.Tensor:
        if generator is not None:
            return generator.draw(indices, options.points, noise)
        return coordinates[indices]

    for iteration in progress(range(options.iterations), desc="distil", total=options.iterations):
        net = PointNet(classes, options.widths, options.flip_w0)
        net_optimizer = torch.optim.SGD(net.parameters(), lr=options.lr_net)
        net_schedule = torch.optim.lr_scheduler.StepLR(
            net_optimizer, step_size=max(1, options.outer_loop * options.inner_loop // 2), gamma=0.1
        )
        total = 0.0
        for outer in range(options.outer_loop):
            if iteration == 0 and outer == 0:  # torch.func refuses saved-tensor hooks: measure the loop
                counter = SavedBytes()
                with counter.hooks():
                    loss = matching_loss(net, clouds, by_class, synthetic, options, rng, batched=False)
                result.saved_bytes = counter.total
            else:
                loss = matching_loss(net, clouds, by_class, synthetic, options, rng)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach())
            if outer == options.outer_loop - 1:
                break
            with torch.no_grad():
                current = normalise_unit_sphere(synthetic(torch.arange(classes * options.cpc)))
            train_epochs(
                net,
                net_optimizer,
                current,
                torch.as_tensor(synthetic_labels),
                options.inner_loop,
                net_schedule,
            )
        schedule.step()
        result.losses.append(total / (classes * options.outer_loop))
        if on_iteration is not None:
            on_iteration(iteration, result)
    if coordinates is not None:
        result.coordinates = coordinates.detach()
    return result


def matching_loss(
    net: nn.Module,
    clouds: np.ndarray,
    by_class: list[np.ndarray],
    synthetic: Callable[[torch.Tensor], torch.Tensor],
    options: DistillOptions,
    rng: np.random.Generator,
    batched: bool = True,
) -> torch.Tensor:
    """The summed per-class matching loss of one outer step: vectorised over classes when `batched` and every
    class fills `batch_real`, else class by class (the same value)."""
    real = [real_batch(clouds, rows, options, rng) for rows in by_class]
    if not batched or len({len(batch) for batch in real}) > 1:
        loss = torch.zeros(())
        for c, batch in enumerate(real):
            indices = torch.arange(c * options.cpc, (c + 1) * options.cpc)
            loss = loss + gradient_match(net, batch, synthetic(indices), c)
        return loss
    drawn = synthetic(torch.arange(len(real) * options.cpc))
    return batched_gradient_match(
        net, torch.stack(real), drawn.reshape(len(real), options.cpc, *drawn.shape[1:])
    )


def train_epochs(
    net: nn.Module,
    optimizer: torch.optim.Optimizer,
    points: torch.Tensor,
    labels: torch.Tensor,
    epochs: int,
    schedule: torch.optim.lr_scheduler.LRScheduler | None = None,
    batch: int = 256,
) -> None:
    """`epochs` shuffled passes of cross-entropy training (the inner loop)."""
    net.train()
    for _ in range(epochs):
        order = torch.randperm(len(points))
        for start in range(0, len(points), batch):
            rows = order[start : start + batch]
            loss = nn.functional.cross_entropy(net(points[rows]), labels[rows])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if schedule is not None:
            schedule.step()


def random_subset(labels: np.ndarray, cpc: int, seed: int) -> np.ndarray:
    """Row indices of `cpc` random real clouds per class (the coreset baseline at the same budget)."""
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.choice(rows, cpc, replace=False) for rows in class_index(labels)])
