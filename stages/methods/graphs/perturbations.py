"""The RINGS mode perturbations: transforms that remove, saturate or randomise node features or structure.

Each works on torch_geometric `Data` (edges stored in both directions) and draws its randomness from the
generator it is given, so a (dataset, mode, seed) triple always yields the same perturbed graphs.

| mode | features | structure |
|---|---|---|
| original | kept | kept |
| empty_features | n×1 zeros | kept |
| complete_features | one-hot node ids (width = largest graph) | kept |
| random_features | N(0, 1), same width | kept |
| shuffled_features | rows permuted within the graph | kept |
| geometric_features | classical MDS of hop distances (`geometric_dim` columns) | kept |
| empty_graph | kept | no edges |
| complete_graph | kept | every pair joined |
| random_graph | kept | G(n, m) with the graph's edge count m |
| random_connected_graph | kept | random tree + random edges up to max(m, n − 1) |
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from stages.core.registry import Registry
from stages.core.seeding import derive_seed
from stages.methods.graphs.geometry import components, hop_distances, mds_coordinates
from stages.methods.graphs.modes import MODES

if TYPE_CHECKING:
    from torch_geometric.data import Data


@dataclass(frozen=True)
class DatasetShape:
    """Dataset-level facts some perturbations need."""

    max_nodes: int
    feature_dim: int
    geometric_dim: int = 4


Transform = Callable[["Data", np.random.Generator, DatasetShape], "Data"]


@dataclass(frozen=True)
class Perturbation:
    """A registered perturbation: which mode it changes and how."""

    name: str
    changes: Literal["none", "features", "structure"]
    transform: Transform
    description: str


PERTURBATIONS: Registry[Perturbation] = Registry("perturbation")


def _register(name: str):
    def decorate(transform: Transform) -> Transform:
        changes, description = MODES[name]
        PERTURBATIONS.add(name, Perturbation(name, changes, transform, description))
        return transform

    return decorate


def undirected_edges(graph: Data) -> np.ndarray:
    """The graph's edges once each, as (low, high) rows."""
    pairs = graph.edge_index.numpy().T
    pairs = np.sort(pairs, axis=1)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    return np.unique(pairs, axis=0) if len(pairs) else pairs.reshape(0, 2)


def _with(graph: Data, x=None, pairs: np.ndarray | None = None) -> Data:
    import torch

    result = graph.clone()
    if x is not None:
        result.x = torch.as_tensor(np.ascontiguousarray(x), dtype=torch.float32)
    if pairs is not None:
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        both = np.concatenate([pairs, pairs[:, ::-1]]).T
        result.edge_index = torch.from_numpy(np.ascontiguousarray(both))
    return result


@_register("original")
def original(graph: Data, rng: np.random.Generator, shape: DatasetShape) -> Data:
    return graph.clone()


@_register("empty_features")
def empty_features(graph: Data, rng: np.random.Generator, shape: DatasetShape) -> Data:
    return _with(graph, x=np.zeros((graph.num_nodes, 1), np.float32))


@_register("complete_features")
def complete_features(graph: Data, rng: np.random.Generator, shape: DatasetShape) -> Data:
    return _with(graph, x=np.eye(shape.max_nodes, dtype=np.float32)[: graph.num_nodes])


@_register("random_features")
def random_features(graph: Data, rng: np.random.Generator, shape: DatasetShape) -> Data:
    return _with(graph, x=rng.standard_normal((graph.num_nodes, shape.feature_dim)).astype(np.float32))


@_register("shuffled_features")
def shuffled_features(graph: Data, rng: np.random.Generator, shape: DatasetShape) -> Data:
    return _with(graph, x=graph.x.numpy()[rng.permutation(graph.num_nodes)])


@_register("geometric_features")
def geometric_features(graph: Data, rng: np.random.Generator, shape: DatasetShape) -> Data:
    n = graph.num_nodes
    pairs = undirected_edges(graph)
    distances = hop_distances(n, pairs)
    coordinates = np.zeros((n, shape.geometric_dim), np.float32)
    for nodes in components(n, pairs):
        coordinates[nodes] = mds_coordinates(distances[np.ix_(nodes, nodes)], shape.geometric_dim)
    return _with(graph, x=coordinates)


@_register("empty_graph")
def empty_graph(graph: Data, rng: np.random.Generator, shape: DatasetShape) -> Data:
    return _with(graph, pairs=np.zeros((0, 2), np.int64))


@_register("complete_graph")
def complete_graph(graph: Data, rng: np.random.Generator, shape: DatasetShape) -> Data:
    low, high = np.triu_indices(graph.num_nodes, k=1)
    return _with(graph, pairs=np.stack([low, high], axis=1))


@_register("random_graph")
def random_graph(graph: Data, rng: np.random.Generator, shape: DatasetShape) -> Data:
    n = graph.num_nodes
    low, high = np.triu_indices(n, k=1)
    chosen = rng.choice(len(low), size=min(len(undirected_edges(graph)), len(low)), replace=False)
    return _with(graph, pairs=np.stack([low[np.sort(chosen)], high[np.sort(chosen)]], axis=1))


@_register("random_connected_graph")
def random_connected_graph(graph: Data, rng: np.random.Generator, shape: DatasetShape) -> Data:
    n = graph.num_nodes
    order = rng.permutation(n)
    parents = [order[rng.integers(0, position)] for position in range(1, n)]
    tree = (
        np.sort(np.stack([order[1:], np.asarray(parents, dtype=np.int64)], axis=1), axis=1) if n > 1 else None
    )
    low, high = np.triu_indices(n, k=1)
    target = min(max(len(undirected_edges(graph)), n - 1), len(low))
    if tree is None:
        return _with(graph, pairs=np.zeros((0, 2), np.int64))
    in_tree = np.zeros(len(low), bool)
    in_tree[_pair_index(tree, n)] = True
    extra = rng.choice(np.flatnonzero(~in_tree), size=target - len(tree), replace=False)
    pairs = np.concatenate([tree, np.stack([low[extra], high[extra]], axis=1)])
    return _with(graph, pairs=pairs)


def _pair_index(pairs: np.ndarray, n: int) -> np.ndarray:
    """Position of (low, high) pairs in `np.triu_indices(n, 1)` order."""
    low, high = pairs[:, 0], pairs[:, 1]
    return low * n - low * (low + 1) // 2 + (high - low - 1)


def dataset_shape(graphs: list[Data], geometric_dim: int = 4) -> DatasetShape:
    """Largest graph and feature width of a dataset."""
    return DatasetShape(
        max_nodes=max(graph.num_nodes for graph in graphs),
        feature_dim=int(graphs[0].x.shape[1]),
        geometric_dim=geometric_dim,
    )


def perturb(graphs: list[Data], mode: str, seed: int, shape: DatasetShape | None = None) -> list[Data]:
    """The dataset under perturbation `mode`, randomness fixed by (`seed`, `mode`)."""
    transform = PERTURBATIONS.get(mode).transform
    shape = shape or dataset_shape(graphs)
    rng = np.random.default_rng(derive_seed(seed, "perturb", mode))
    return [transform(graph, rng, shape) for graph in graphs]
