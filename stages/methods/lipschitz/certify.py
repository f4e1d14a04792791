"""Certificates of 1-Lipschitz classifiers: radii (orthogonal last layer or LLN), certified accuracy, ACR,
a whole-net Lipschitz estimate by power iteration, and an l2 PGD attack to test the certificates."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import torch
import torch.nn.functional as F

EPSILONS = (36 / 255, 72 / 255, 108 / 255)
"""The paper's l2 radii ε ∈ {36, 72, 108}/255."""


def _margins(logits: torch.Tensor, classes: torch.Tensor) -> torch.Tensor:
    """z_c − z_j for every j (row c itself: +inf)."""
    own = logits.gather(1, classes[:, None])
    margins = own - logits
    return margins.scatter(1, classes[:, None], math.inf)


def ortho_radius(logits: torch.Tensor, classes: torch.Tensor, lipschitz: float = 1.0) -> torch.Tensor:
    """(z_c − max_{j≠c} z_j) / (√2 · L): the radius of a net whose last layer is orthogonal (L-Lipschitz)."""
    return _margins(logits, classes).min(dim=1).values / (math.sqrt(2) * lipschitz)


def lln_radius(
    logits: torch.Tensor, classes: torch.Tensor, weight: torch.Tensor, lipschitz: float = 1.0
) -> torch.Tensor:
    """min_{j≠c} (z_c − z_j) / (‖w_c − w_j‖ · L) with w the last layer's (normalised) rows and L the Lipschitz
    constant of the features feeding it."""
    distances = torch.cdist(weight[classes], weight)
    distances = distances.scatter(1, classes[:, None], 1.0)
    return (_margins(logits, classes) / (distances * lipschitz)).min(dim=1).values


def certified_accuracy(
    correct: np.ndarray, radii: np.ndarray, epsilons: Sequence[float] = EPSILONS
) -> list[float]:
    """Share of points that are correct and certified beyond each ε (radius > ε)."""
    return [float(np.mean(correct & (radii > eps))) for eps in epsilons]


def average_certified_radius(correct: np.ndarray, radii: np.ndarray, cap: float = 1.0) -> float:
    """ACR: mean over points of the radius (clipped to [0, cap]) of the correct ones (0 for the others)."""
    return float(np.mean(np.clip(radii, 0, cap) * correct))


def jacobian_norms(
    model: Callable[[torch.Tensor], torch.Tensor], inputs: torch.Tensor, iterations: int = 50
) -> torch.Tensor:
    """Per input row, the largest singular value of the Jacobian of `model` there, by power iteration on JᵀJ
    (forward- and reverse-mode products; rows must not interact, i.e. the model is in eval mode)."""
    generator = torch.Generator().manual_seed(0)
    u = torch.randn(inputs.shape, generator=generator, dtype=inputs.dtype)
    shape = (-1,) + (1,) * (inputs.dim() - 1)
    u = u / u.flatten(1).norm(dim=1).view(shape)
    sigma = torch.zeros(len(inputs))
    for _ in range(iterations):
        _, vjp = torch.func.vjp(model, inputs)
        _, ju = torch.func.jvp(model, (inputs,), (u,))
        sigma = ju.detach().flatten(1).norm(dim=1)
        (jtju,) = vjp(ju.detach())
        u = jtju.detach() / jtju.detach().flatten(1).norm(dim=1).clamp_min(1e-30).view(shape)
    return sigma


def jacobian_norm(
    model: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, iterations: int = 50
) -> float:
    """Largest singular value of the Jacobian of `model` at one input `x` (shape (1, ...))."""
    return float(jacobian_norms(model, x, iterations)[0])


def empirical_lipschitz(
    model: Callable[[torch.Tensor], torch.Tensor], inputs: torch.Tensor, iterations: int = 50
) -> float:
    """max over `inputs` of the local Lipschitz constant ‖J(x)‖₂ (for a piecewise-linear net, its max over
    all x is the global constant)."""
    return float(jacobian_norms(model, inputs, iterations).max())


def pgd_l2(
    model: Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    labels: torch.Tensor,
    radius: torch.Tensor,
    steps: int = 20,
    restarts: int = 1,
    seed: int = 0,
) -> torch.Tensor:
    """Whether an l2 PGD attack with per-point budget `radius` flips the prediction from `labels` (bool per
    point); step size 2.5 · radius / steps, random start inside the ball, no box constraint."""
    generator = torch.Generator().manual_seed(seed)
    flipped = torch.zeros(len(x), dtype=torch.bool)
    shape = (-1,) + (1,) * (x.dim() - 1)
    r = radius.clamp_min(0).view(shape)
    for _ in range(restarts):
        delta = torch.randn(x.shape, generator=generator)
        delta = (
            delta
            / delta.flatten(1).norm(dim=1).view(shape)
            * r
            * torch.rand(len(x), generator=generator).view(shape)
        )
        for _ in range(steps):
            delta.requires_grad_(True)
            loss = F.cross_entropy(model(x + delta), labels)
            (grad,) = torch.autograd.grad(loss, delta)
            grad = grad / grad.flatten(1).norm(dim=1).clamp_min(1e-12).view(shape)
            delta = delta.detach() + 2.5 * r / steps * grad
            norms = delta.flatten(1).norm(dim=1).view(shape)
            delta = delta * torch.minimum(torch.ones_like(norms), r / norms.clamp_min(1e-12))
            with torch.no_grad():
                flipped |= model(x + delta).argmax(1) != labels
    return flipped
