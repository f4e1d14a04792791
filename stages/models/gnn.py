"""Small graph classifiers (torch_geometric): GIN or GCN layers, pooled per graph, a linear head."""

from __future__ import annotations

import torch
from torch import nn

from stages.models.config import GnnKind


class GraphClassifier(nn.Module):
    """`layers` message-passing layers of width `hidden` (GIN: sum pooling, GCN: mean pooling) + linear head.

    The readout concatenates the pooled output of every layer (jumping knowledge), so shallow and deep
    structure both reach the head.
    """

    def __init__(self, in_dim: int, hidden: int, layers: int, n_classes: int, kind: GnnKind = "gin") -> None:
        super().__init__()
        from torch_geometric.nn import GCNConv, GINConv, global_add_pool, global_mean_pool

        self.kind = kind
        self.convs = nn.ModuleList()
        width = in_dim
        for _ in range(layers):
            if kind == "gin":
                mlp = nn.Sequential(nn.Linear(width, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
                self.convs.append(GINConv(mlp, train_eps=True))
            else:
                self.convs.append(GCNConv(width, hidden))
            width = hidden
        self.pool = global_add_pool if kind == "gin" else global_mean_pool
        self.head = nn.Linear(hidden * layers, n_classes)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor, batch: torch.Tensor) -> torch.Tensor:
        """Class logits per graph of the batch."""
        pooled = []
        for conv in self.convs:
            x = torch.relu(conv(x, edge_index))
            pooled.append(self.pool(x, batch))
        return self.head(torch.cat(pooled, dim=1))
