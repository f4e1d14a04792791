"""Reading `datasets.safetensors` back as tensors."""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors.torch import load_file


def load_split(
    path: str | Path, prefix: str
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Train images, train labels, test images, test labels of `prefix` ("fashion" or "mnist")."""
    arrays = load_file(path)
    return tuple(arrays[f"{prefix}_{part}"] for part in ("train_x", "train_y", "test_x", "test_y"))
