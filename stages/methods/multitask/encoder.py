"""A small 1-D CNN ECG encoder: four strided conv blocks (BatchNorm, ReLU), then mean‖max pooling over time.

`tokens(x)` gives the last feature map as a sequence (for cross-attention fusion); `forward(x)` the pooled
embedding. Records are normalised per lead as x / (max − min) after removing the mean (the card's scaling).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn


@dataclass(frozen=True)
class EncoderConfig:
    """Input leads, channel widths of the four blocks, kernel sizes."""

    leads: int = 8
    widths: tuple[int, ...] = (16, 32, 64, 64)
    kernels: tuple[int, ...] = (7, 5, 5, 3)

    @property
    def dim(self) -> int:
        return 2 * self.widths[-1]


class ECGEncoder(nn.Module):
    """[batch × leads × samples] → [batch × 2·width] (mean and max over time of the last block)."""

    def __init__(self, config: EncoderConfig = EncoderConfig()) -> None:
        super().__init__()
        self.config = config
        blocks, channels = [], config.leads
        for width, kernel in zip(config.widths, config.kernels, strict=True):
            blocks += [
                nn.Conv1d(channels, width, kernel, stride=2, padding=kernel // 2, bias=False),
                nn.BatchNorm1d(width),
                nn.ReLU(),
            ]
            channels = width
        self.body = nn.Sequential(*blocks)

    def tokens(self, x: torch.Tensor) -> torch.Tensor:
        """The last feature map as tokens [batch × time × width]."""
        return self.body(x).transpose(1, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = self.body(x)
        return torch.cat([features.mean(dim=2), features.amax(dim=2)], dim=1)


class Classifier(nn.Module):
    """An encoder and a linear multi-label head."""

    def __init__(self, encoder: ECGEncoder, classes: int) -> None:
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(encoder.config.dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(x))


def normalise(signals: np.ndarray) -> np.ndarray:
    """Per record and lead: (x − mean) / (max − min) (float32; a flat lead stays 0)."""
    x = signals.astype(np.float32)
    x = x - x.mean(axis=-1, keepdims=True)
    span = x.max(axis=-1, keepdims=True) - x.min(axis=-1, keepdims=True)
    return np.divide(x, span, out=np.zeros_like(x), where=span > 1e-6)
