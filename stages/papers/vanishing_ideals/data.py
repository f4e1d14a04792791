"""The prepared arrays and base network of the VI-Net pipeline, as every step reads them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors.numpy import load_file
from safetensors.torch import load_file as load_torch

from stages.methods.ideals.resnet import ResNet
from stages.papers.vanishing_ideals.params import VanishingIdealsParams

SPLITS = ("train", "validation", "test")


@dataclass(frozen=True)
class Prepared:
    """Images as float tensors (N, 1, side, side), standardised with the training mean/std, and labels."""

    images: dict[str, torch.Tensor]
    labels: dict[str, np.ndarray]


def to_tensor(pixels: np.ndarray, side: int, mean: float, std: float) -> torch.Tensor:
    """uint8 rows (N, 784) → standardised (N, 1, side, side); side 14 average-pools 2×2."""
    images = torch.from_numpy(pixels.astype(np.float32) / 255.0).reshape(-1, 1, 28, 28)
    if side == 14:
        images = torch.nn.functional.avg_pool2d(images, 2)
    return (images - mean) / std


def load_prepared(path: str | Path, params: VanishingIdealsParams) -> Prepared:
    """The three splits from `datasets.safetensors`."""
    arrays = load_file(str(path))
    mean, std = float(arrays["pixel_mean"][0]), float(arrays["pixel_std"][0])
    side = params.grid.base.image_side
    return Prepared(
        images={split: to_tensor(arrays[f"{split}_x"], side, mean, std) for split in SPLITS},
        labels={split: arrays[f"{split}_y"].astype(np.int64) for split in SPLITS},
    )


def new_net(params: VanishingIdealsParams, n_classes: int = 10) -> ResNet:
    """The base architecture of the params (untrained)."""
    return ResNet(1, params.grid.base.widths, params.grid.base.blocks, n_classes)


def load_net(path: str | Path, params: VanishingIdealsParams) -> ResNet:
    """The trained base network."""
    net = new_net(params)
    net.load_state_dict(load_torch(str(path)))
    return net.eval()
