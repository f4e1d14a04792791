"""A small convolutional classifier for image rows, with the same `embed()` interface as the MLP.

Rows arrive flat (as every table in the project stores them) and are reshaped to `(C, H, W)` inside, so the
training loop, tracing and embedding code serve both architectures unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn


class SmallCNN(nn.Module):
    """`[conv3×3 → BatchNorm → ReLU → max-pool 2] per channel width → dense hidden… → n_classes`.

    `embed()` returns the last dense hidden layer (or the pooled convolutional features when `hidden` is empty).
    A width's pooling is skipped once the feature map is 1 pixel high or wide, so small images (8 × 8 digits)
    take as many widths as large ones.
    """

    def __init__(
        self,
        image_shape: tuple[int, int, int],
        channels: Sequence[int],
        hidden: Sequence[int],
        n_classes: int,
    ) -> None:
        super().__init__()
        self.image_shape = tuple(image_shape)
        in_channels, height, width = self.image_shape
        blocks: list[nn.Module] = []
        for out_channels in channels:
            blocks += [
                nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False),
                nn.BatchNorm2d(out_channels),
                nn.ReLU(),
            ]
            if min(height, width) >= 2:
                blocks.append(nn.MaxPool2d(2))
                height, width = height // 2, width // 2
            in_channels = out_channels
        dense: list[nn.Module] = [nn.Flatten()]
        size = in_channels * height * width
        for units in hidden:
            dense += [nn.Linear(size, units), nn.ReLU()]
            size = units
        self.body = nn.Sequential(*blocks, *dense)
        self.head = nn.Linear(size, n_classes)
        self.embedding_dim = size

    def embed(self, inputs: torch.Tensor) -> torch.Tensor:
        """The penultimate representation of flat (or already shaped) image rows."""
        return self.body(inputs.reshape(-1, *self.image_shape))

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """Class logits."""
        return self.head(self.embed(inputs))
