"""PointNet with instance norm (DD3D's distillation and evaluation network), optionally behind the sign flip.

The shared per-point 1×1 convolutions are matrix products with `nn.Linear` weights on (b × c × n) features
(the same weights up to a trailing unit axis, so the row-wise gradient distance is unchanged) and instance
norm is per-cloud, per-channel standardisation over points (biased variance, ε = 1e-5, no affine:
`nn.InstanceNorm1d`'s defaults); this avoids the slow CPU path of Conv1d under double backward.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import torch
from torch import nn

from stages.methods.distillation.rotator import sign_flip

EPS = 1e-5


def instance_norm(x: torch.Tensor) -> torch.Tensor:
    """Each channel of each cloud (b × c × n) standardised over its n points."""
    centred = x - x.mean(dim=-1, keepdim=True)
    return centred * torch.rsqrt(centred.pow(2).mean(dim=-1, keepdim=True) + EPS)


class PointNet(nn.Module):
    """Per-point layers 3 → widths with instance norm and ReLU (none after the last), max-pool over points, a
    linear classifier. `flip_w0`: apply the rotator's sign flip to the input first (None: no flip)."""

    def __init__(
        self, classes: int, widths: Sequence[int] = (64, 128, 1024), flip_w0: float | None = None
    ) -> None:
        super().__init__()
        dims = (3, *widths)
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in pairwise(dims))
        self.classifier = nn.Linear(widths[-1], classes)
        self.flip_w0 = flip_w0

    def embed(self, points: torch.Tensor) -> torch.Tensor:
        """The max-pooled feature of clouds (b × n × 3)."""
        x = sign_flip(points, self.flip_w0) if self.flip_w0 is not None else points
        x = x.transpose(1, 2)
        last = len(self.layers) - 1
        for i, layer in enumerate(self.layers):
            x = instance_norm(torch.matmul(layer.weight, x) + layer.bias[:, None])
            if i < last:
                x = torch.relu(x)
        return x.amax(dim=-1)

    def forward(self, points: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.embed(points))
