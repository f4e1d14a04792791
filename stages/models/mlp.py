"""A multilayer perceptron classifier with an embedding head (penultimate layer) for feature-based methods."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn


class MLPClassifier(nn.Module):
    """`in_dim → hidden… → n_classes` with ReLU; `embed()` returns the last hidden layer."""

    def __init__(self, in_dim: int, hidden: Sequence[int], n_classes: int) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = in_dim
        for size in hidden:
            layers += [nn.Linear(width, size), nn.ReLU()]
            width = size
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(width, n_classes)
        self.embedding_dim = width

    def embed(self, inputs: torch.Tensor) -> torch.Tensor:
        """The penultimate representation."""
        return self.body(inputs)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """Class logits."""
        return self.head(self.body(inputs))
