"""Raw denoiser networks F(x, c_noise) for :class:`stages.methods.diffusion.edm.Precond`."""

from __future__ import annotations

import math

import torch
from torch import nn


def fourier_features(c_noise: torch.Tensor, size: int) -> torch.Tensor:
    """Sinusoidal features of the noise level (EDM's positional embedding, `size` = 2 × frequencies)."""
    half = size // 2
    frequencies = torch.exp(-math.log(10_000.0) * torch.arange(half, dtype=c_noise.dtype) / half)
    angles = c_noise[:, None] * 250.0 * frequencies[None, :]
    return torch.cat([angles.cos(), angles.sin()], dim=1)


class MLPDenoiser(nn.Module):
    """An MLP on flat vectors: [x, embed(c_noise)] → `depth` SiLU layers of `width` → x's shape.

    The card's 8×8 model is `MLPDenoiser(64, width=128, depth=3)` (about 51k parameters); images of any shape
    are flattened and restored.
    """

    def __init__(self, dim: int, width: int = 128, depth: int = 3, embedding: int = 16) -> None:
        super().__init__()
        self.dim, self.embedding = dim, embedding
        layers: list[nn.Module] = []
        size = dim + embedding
        for _ in range(depth):
            layers += [nn.Linear(size, width), nn.SiLU()]
            size = width
        layers.append(nn.Linear(size, dim))
        self.layers = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor, c_noise: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(x.shape[0], -1)
        features = torch.cat([flat, fourier_features(c_noise, self.embedding)], dim=1)
        return self.layers(features).reshape(x.shape)


class _Block(nn.Module):
    """Two 3×3 convolutions with GroupNorm/SiLU and a noise-level shift."""

    def __init__(self, channels_in: int, channels: int, embedding: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels_in, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
        self.norm1 = nn.GroupNorm(min(8, channels), channels)
        self.norm2 = nn.GroupNorm(min(8, channels), channels)
        self.shift = nn.Linear(embedding, channels)
        self.skip = nn.Conv2d(channels_in, channels, 1) if channels_in != channels else nn.Identity()

    def forward(self, x: torch.Tensor, emb: torch.Tensor) -> torch.Tensor:
        h = nn.functional.silu(self.norm1(self.conv1(x)))
        h = h + self.shift(emb)[:, :, None, None]
        h = nn.functional.silu(self.norm2(self.conv2(h)))
        return h + self.skip(x)


class SmallUNet(nn.Module):
    """A two-level U-Net for single-channel images with even sides (14×14, 16×16): `channels` at full
    resolution, 2 × `channels` at half, one skip connection. Input (N, H, W) or (N, 1, H, W)."""

    def __init__(self, channels: int = 32, embedding: int = 32) -> None:
        super().__init__()
        self.embedding = embedding
        self.embed = nn.Sequential(nn.Linear(embedding, embedding), nn.SiLU())
        self.down = _Block(1, channels, embedding)
        self.middle = _Block(channels, 2 * channels, embedding)
        self.up = _Block(3 * channels, channels, embedding)
        self.out = nn.Conv2d(channels, 1, 1)

    def forward(self, x: torch.Tensor, c_noise: torch.Tensor) -> torch.Tensor:
        image = x if x.dim() == 4 else x.unsqueeze(1)
        emb = self.embed(fourier_features(c_noise, self.embedding))
        high = self.down(image, emb)
        low = self.middle(nn.functional.avg_pool2d(high, 2), emb)
        up = nn.functional.interpolate(low, scale_factor=2.0, mode="nearest")
        result = self.out(self.up(torch.cat([high, up], dim=1), emb))
        return result.reshape(x.shape)


def build_net(kind: str, shape: tuple[int, ...], width: int = 128, depth: int = 3) -> nn.Module:
    """The raw network for samples of `shape` (without the batch axis): `mlp` or `unet` (2-D images with even
    sides only)."""
    if kind == "mlp":
        return MLPDenoiser(int(math.prod(shape)), width=width, depth=depth)
    if kind == "unet":
        if len(shape) != 2 or shape[0] % 2 or shape[1] % 2:
            raise ValueError(f"the U-Net needs 2-D images with even sides, got shape {shape}")
        return SmallUNet(channels=width // 4 if width >= 32 else 8)
    raise ValueError(f"unknown denoiser {kind!r}; known: mlp, unet")
