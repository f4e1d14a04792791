"""Gradient matching (DC, Zhao et al. 2021; DD3D's distance): per layer, Σ over output rows of 1 − cos between
the real and synthetic gradients of the cross-entropy; 1-D parameters (biases, norms) are skipped."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn
from torch.func import functional_call, grad, vmap

EPS = 1e-6
"""Added to the product of norms, as in the reference implementation."""


def layer_distance(real: torch.Tensor, synthetic: torch.Tensor) -> torch.Tensor:
    """Σ_rows (1 − cos) between two gradients of one parameter (rows: the first axis); 0 for 1-D parameters."""
    if real.dim() == 1:
        return torch.zeros((), dtype=real.dtype)
    a, b = real.reshape(real.shape[0], -1), synthetic.reshape(synthetic.shape[0], -1)
    return torch.sum(1 - (a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1) + EPS))


def match_loss(real: Sequence[torch.Tensor], synthetic: Sequence[torch.Tensor]) -> torch.Tensor:
    """Σ_layers layer_distance over matching lists of gradients."""
    if len(real) != len(synthetic):
        raise ValueError(f"gradient lists differ in length: {len(real)} real vs {len(synthetic)} synthetic")
    return sum((layer_distance(r, s) for r, s in zip(real, synthetic, strict=True)), torch.zeros(()))


def class_gradients(
    net: nn.Module, points: torch.Tensor, labels: torch.Tensor, create_graph: bool
) -> list[torch.Tensor]:
    """Gradients of the mean cross-entropy of `net` on (points, labels) w.r.t. every parameter."""
    loss = nn.functional.cross_entropy(net(points), labels)
    grads = torch.autograd.grad(loss, list(net.parameters()), create_graph=create_graph)
    return list(grads) if create_graph else [g.detach() for g in grads]


def gradient_match(net: nn.Module, real: torch.Tensor, synthetic: torch.Tensor, label: int) -> torch.Tensor:
    """The matching loss of one class: real (r × n × 3) against synthetic (s × m × 3) clouds of `label`."""
    real_labels = torch.full((len(real),), label, dtype=torch.long)
    synthetic_labels = torch.full((len(synthetic),), label, dtype=torch.long)
    g_real = class_gradients(net, real, real_labels, create_graph=False)
    g_synthetic = class_gradients(net, synthetic, synthetic_labels, create_graph=True)
    return match_loss(g_real, g_synthetic)


def class_loss(params: dict[str, torch.Tensor], net: nn.Module, points: torch.Tensor, labels: torch.Tensor):
    """Mean cross-entropy of `net` with `params` on (points, labels): the function whose gradient is matched."""
    return nn.functional.cross_entropy(functional_call(net, params, (points,)), labels)


def batched_gradient_match(net: nn.Module, real: torch.Tensor, synthetic: torch.Tensor) -> torch.Tensor:
    """Σ over classes c of `gradient_match(net, real[c], synthetic[c], c)` in one vectorised pass: real
    (C × r × n × 3) and synthetic (C × s × m × 3) clouds, class c at index c. Same value, fewer autograd ops."""
    classes = len(real)
    params = dict(net.named_parameters())
    frozen = {name: value.detach() for name, value in params.items()}
    per_class = vmap(grad(class_loss), in_dims=(None, None, 0, 0))
    label = torch.arange(classes)[:, None]
    g_real = per_class(frozen, net, real, label.expand(classes, real.shape[1]))
    g_synthetic = per_class(params, net, synthetic, label.expand(classes, synthetic.shape[1]))
    total = torch.zeros(())
    for name, value in params.items():
        if value.dim() == 1:
            continue
        a = g_real[name].reshape(classes, value.shape[0], -1).detach()
        b = g_synthetic[name].reshape(classes, value.shape[0], -1)
        total = total + torch.sum(1 - (a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1) + EPS))
    return total
