"""Training and scoring graph classifiers: a GNN on `Data` lists, or a structure-blind MLP on mean-pooled features."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch
from torch.nn import functional as F

from stages.models.config import GnnConfig
from stages.models.gnn import GraphClassifier
from stages.models.training import Standardizer, TrainConfig, build_model, train_classifier

if TYPE_CHECKING:
    from torch_geometric.data import Data


def train_gnn(graphs: list[Data], n_classes: int, config: GnnConfig, seed: int) -> GraphClassifier:
    """A GNN trained with Adam on `graphs`; initialisation and batch order fixed by `seed`."""
    from torch_geometric.loader import DataLoader

    torch.manual_seed(seed)
    model = GraphClassifier(int(graphs[0].x.shape[1]), config.hidden, config.layers, n_classes, config.kind)
    optimizer = torch.optim.Adam(
        model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    loader = DataLoader(
        graphs, batch_size=config.batch_size, shuffle=True, generator=torch.Generator().manual_seed(seed)
    )
    model.train()
    for _ in range(config.epochs):
        for batch in loader:
            loss = F.cross_entropy(model(batch.x, batch.edge_index, batch.batch), batch.y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    model.eval()
    return model


@torch.no_grad()
def gnn_probabilities(model: GraphClassifier, graphs: list[Data], batch_size: int = 256) -> np.ndarray:
    """Class probabilities per graph (n_graphs × n_classes)."""
    from torch_geometric.loader import DataLoader

    model.eval()
    outputs = [
        model(batch.x, batch.edge_index, batch.batch).softmax(dim=1)
        for batch in DataLoader(graphs, batch_size=batch_size, shuffle=False)
    ]
    return torch.cat(outputs).numpy()


def mean_pooled_features(graphs: list[Data]) -> np.ndarray:
    """Each graph's node features averaged: what a structure-blind model sees."""
    return np.stack([graph.x.numpy().mean(axis=0) for graph in graphs]).astype(np.float32)


def train_pooled_mlp(
    train_graphs: list[Data], test_graphs: list[Data], n_classes: int, config: TrainConfig, seed: int
) -> np.ndarray:
    """Structure-blind baseline: an MLP on mean-pooled node features; returns test class probabilities."""
    train_inputs, test_inputs = mean_pooled_features(train_graphs), mean_pooled_features(test_graphs)
    scale = Standardizer.fit(train_inputs)
    labels = torch.tensor([int(graph.y) for graph in train_graphs])
    model = build_model(train_inputs.shape[1], n_classes, config, seed)
    train_classifier(model, scale(train_inputs), labels, config, seed)
    with torch.no_grad():
        return model(scale(test_inputs)).softmax(dim=1).numpy()
