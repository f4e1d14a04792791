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
| spectral_features | Laplacian eigenmaps (`geometric_dim` columns), not derived from hop distances | kept |
| empty_graph | kept | no edges |
| complete_graph | kept | every pair joined |
| random_graph | kept | G(n, m) with the graph's edge count m |
| random_connected_graph | kept | random tree + random edges up to max(m, n − 1) |

Structure perturbations drop `edge_attr` (the new edges have none). Random graphs use O(n + m) memory: pairs
are drawn as indices into the n(n − 1)/2 node pairs and decoded, never materialising all pairs.

`DatasetShape.random_graph_semantics` picks what "the same number of edges" means:
- `paper` (default): m undirected edges, m the graph's undirected edge count, stored in both directions;
- `official` (aidos-lab/rings 68a58a4): `edge_index.size(1)` = 2m edges — random_graph draws 2m ordered pairs
  uniformly with replacement (self-loops redrawn), random_connected_graph a recursive tree plus distinct
  pairs up to max(2m, n − 1) — stored one direction each, as the official transforms leave them. Capped at the
  n(n − 1)/2 pairs there are (the official loop never ends beyond that).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from stages.core.registry import Registry
from stages.core.seeding import derive_seed
from stages.methods.graphs.geometry import (
    components,
    dense_adjacency,
    hop_distances,
    laplacian_eigenmaps,
    mds_coordinates,
)
from stages.methods.graphs.modes import MODES

if TYPE_CHECKING:
    from torch_geometric.data import Data


@dataclass(frozen=True)
class DatasetShape:
    """Dataset-level facts some perturbations need."""

    max_nodes: int
    feature_dim: int
    geometric_dim: int = 4
    random_graph_semantics: Literal["paper", "official"] = "paper"


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


def _with(graph: Data, x=None, pairs: np.ndarray | None = None, directed: bool = False) -> Data:
    """A copy with new features and/or new edges; new edges drop `edge_attr` (it described the old ones).

    `pairs` are undirected (stored in both directions) unless `directed`, then stored as given.
    """
    import torch

    result = graph.clone()
    if x is not None:
        result.x = torch.as_tensor(np.ascontiguousarray(x), dtype=torch.float32)
    if pairs is not None:
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        both = pairs.T if directed else np.concatenate([pairs, pairs[:, ::-1]]).T
        result.edge_index = torch.from_numpy(np.ascontiguousarray(both))
        if "edge_attr" in result:
            del result.edge_attr
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


@_register("spectral_features")
def spectral_features(graph: Data, rng: np.random.Generator, shape: DatasetShape) -> Data:
    n = graph.num_nodes
    pairs = undirected_edges(graph)
    dense = dense_adjacency(n, pairs)
    coordinates = np.zeros((n, shape.geometric_dim), np.float32)
    for nodes in components(n, pairs):
        coordinates[nodes] = laplacian_eigenmaps(dense[np.ix_(nodes, nodes)], shape.geometric_dim)
    return _with(graph, x=coordinates)


@_register("empty_graph")
def empty_graph(graph: Data, rng: np.random.Generator, shape: DatasetShape) -> Data:
    return _with(graph, pairs=np.zeros((0, 2), np.int64))


@_register("complete_graph")
def complete_graph(graph: Data, rng: np.random.Generator, shape: DatasetShape) -> Data:
    low, high = np.triu_indices(graph.num_nodes, k=1)  # the output itself has n(n − 1)/2 edges
    return _with(graph, pairs=np.stack([low, high], axis=1))


def pair_count(n: int) -> int:
    """How many unordered node pairs n nodes have."""
    return n * (n - 1) // 2


def pair_index(pairs: np.ndarray, n: int) -> np.ndarray:
    """Position of (low, high) pairs in `np.triu_indices(n, 1)` order."""
    low, high = pairs[:, 0], pairs[:, 1]
    return low * n - low * (low + 1) // 2 + (high - low - 1)


def index_pairs(indices: np.ndarray, n: int) -> np.ndarray:
    """Inverse of `pair_index`: (low, high) rows of positions in `np.triu_indices(n, 1)` order, O(len) memory."""
    indices = np.asarray(indices, dtype=np.int64)
    # row i starts at offset(i) = i(2n − i − 1)/2; solve offset(i) ≤ t for the largest i, then fix rounding
    low = np.floor((2 * n - 1 - np.sqrt((2.0 * n - 1) ** 2 - 8.0 * indices)) / 2).astype(np.int64)
    low = np.clip(low, 0, max(n - 2, 0))

    def offset(row: np.ndarray) -> np.ndarray:
        return row * (2 * n - row - 1) // 2

    low -= offset(low) > indices
    low += offset(low + 1) <= indices
    return np.stack([low, indices - offset(low) + low + 1], axis=1)


def _edge_target(graph: Data, semantics: str) -> int:
    """The edge count random graphs keep: m undirected (paper) or edge_index.size(1) (official)."""
    return int(graph.edge_index.shape[1]) if semantics == "official" else len(undirected_edges(graph))


@_register("random_graph")
def random_graph(graph: Data, rng: np.random.Generator, shape: DatasetShape) -> Data:
    n = graph.num_nodes
    target = _edge_target(graph, shape.random_graph_semantics)
    if shape.random_graph_semantics == "official":
        return _with(graph, pairs=_official_random_pairs(n, target, rng), directed=True)
    chosen = rng.choice(pair_count(n), size=min(target, pair_count(n)), replace=False)
    return _with(graph, pairs=index_pairs(np.sort(chosen), n))


def _official_random_pairs(n: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """`count` ordered pairs uniform with replacement, self-loops' targets redrawn (as aidos-lab/rings)."""
    if n < 2:
        return np.zeros((0, 2), np.int64)
    source, target = rng.integers(0, n, count), rng.integers(0, n, count)
    while (loops := source == target).any():
        target[loops] = rng.integers(0, n, int(loops.sum()))
    return np.stack([source, target], axis=1)


def _random_tree(n: int, rng: np.random.Generator, shape: DatasetShape) -> np.ndarray:
    """A random recursive tree: each node joins a uniform earlier one.

    paper: in a random node order, rows (low, high); official: in node-id order, node i joins one of 0..i−1,
    rows (i, parent) as the official transform stores them.
    """
    if shape.random_graph_semantics == "official":
        children = np.arange(1, n)
        return np.stack([children, rng.integers(0, children)], axis=1)
    order = rng.permutation(n)
    parents = order[rng.integers(0, np.arange(1, n))]  # node at position p joins one at positions 0..p − 1
    return np.sort(np.stack([order[1:], parents], axis=1), axis=1)


@_register("random_connected_graph")
def random_connected_graph(graph: Data, rng: np.random.Generator, shape: DatasetShape) -> Data:
    n = graph.num_nodes
    if n < 2:
        return _with(graph, pairs=np.zeros((0, 2), np.int64))
    tree = _random_tree(n, rng, shape)
    target = min(max(_edge_target(graph, shape.random_graph_semantics), n - 1), pair_count(n))
    taken = np.sort(pair_index(np.sort(tree, axis=1), n))
    ranks = rng.choice(pair_count(n) - len(taken), size=target - len(tree), replace=False)
    extra = index_pairs(_skip_taken(ranks, taken), n)
    return _with(
        graph, pairs=np.concatenate([tree, extra]), directed=shape.random_graph_semantics == "official"
    )


def _skip_taken(ranks: np.ndarray, taken: np.ndarray) -> np.ndarray:
    """The `ranks`-th integers not in the sorted distinct array `taken` (`np.flatnonzero(~mask)[ranks]`)."""
    ranks = np.asarray(ranks, dtype=np.int64)
    return ranks + np.searchsorted(taken - np.arange(len(taken)), ranks, side="right")


def dataset_shape(
    graphs: list[Data], geometric_dim: int = 4, random_graph_semantics: Literal["paper", "official"] = "paper"
) -> DatasetShape:
    """Largest graph and feature width of a dataset, and the options of the transforms that need them."""
    return DatasetShape(
        max_nodes=max(graph.num_nodes for graph in graphs),
        feature_dim=int(graphs[0].x.shape[1]),
        geometric_dim=geometric_dim,
        random_graph_semantics=random_graph_semantics,
    )


def perturb(graphs: list[Data], mode: str, seed: int, shape: DatasetShape | None = None) -> list[Data]:
    """The dataset under perturbation `mode`, randomness fixed by (`seed`, `mode`)."""
    transform = PERTURBATIONS.get(mode).transform
    shape = shape or dataset_shape(graphs)
    rng = np.random.default_rng(derive_seed(seed, "perturb", mode))
    return [transform(graph, rng, shape) for graph in graphs]
