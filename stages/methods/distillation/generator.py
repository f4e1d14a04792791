"""DD3D's resolution-free point generator: a SIREN on per-point noise u ~ U(0, 1), modulated per cloud.

Each synthetic cloud `k` (class c, copy j: k = c·cpc + j) owns an embedding; the hidden outputs of the two
sine layers are multiplied by relu(embedding) (the second by Linear+ReLU of it); a bias-free 256 → 3 layer
with tanh gives the coordinates. N noise draws give N points, so a cloud is drawn at any resolution.
"""

from __future__ import annotations

import math

import torch
from torch import nn


class SineLayer(nn.Module):
    """sin(w₀ (W x + b)) with SIREN's initialisation (first layer U(−1/d, 1/d), later U(±√(c/d)/w₀))."""

    def __init__(self, dim_in: int, dim_out: int, w0: float, first: bool, bias: bool = True) -> None:
        super().__init__()
        self.w0 = w0
        bound = 1 / dim_in if first else math.sqrt(6.0 / dim_in) / w0
        self.linear = nn.Linear(dim_in, dim_out, bias=bias)
        nn.init.uniform_(self.linear.weight, -bound, bound)
        if bias:
            nn.init.uniform_(self.linear.bias, -bound, bound)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sin(self.w0 * self.linear(x))


class PointGenerator(nn.Module):
    """The SIREN generator of `clouds` synthetic clouds (classes × cpc, class-major)."""

    def __init__(self, clouds: int, hidden: int = 256, layers: int = 2, w0_first: float = 100.0) -> None:
        super().__init__()
        self.clouds = clouds
        self.sines = nn.ModuleList(
            SineLayer(1 if i == 0 else hidden, hidden, w0_first if i == 0 else 1.0, first=i == 0)
            for i in range(layers)
        )
        self.embedding = nn.Embedding(clouds, hidden)
        self.modulations = nn.ModuleList(
            nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU()) for _ in range(layers - 1)
        )
        self.out = nn.Linear(hidden, 3, bias=False)
        bound = math.sqrt(6.0 / hidden)
        nn.init.uniform_(self.out.weight, -bound, bound)

    def forward(self, noise: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
        """Points (b × n × 3) of clouds `indices` (b) from noise (b × n × 1)."""
        mod = torch.relu(self.embedding(indices))
        mods = [mod]
        for layer in self.modulations:
            mod = layer(mod)
            mods.append(mod)
        x = noise
        for sine, modulation in zip(self.sines, mods, strict=True):
            x = sine(x) * modulation.unsqueeze(1)
        return torch.tanh(self.out(x))

    def draw(
        self, indices: torch.Tensor, points: int, generator: torch.Generator | None = None
    ) -> torch.Tensor:
        """Clouds `indices` at `points` points each, from fresh U(0, 1) noise."""
        noise = torch.rand((len(indices), points, 1), generator=generator)
        return self(noise, indices)
