"""Graph geometry shared by perturbations and complementarity: shortest paths, components, MDS coordinates."""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components, shortest_path


def adjacency(n_nodes: int, edges: np.ndarray) -> coo_matrix:
    """Symmetric unweighted adjacency of `n_nodes` nodes from undirected (or directed) edge pairs (m × 2)."""
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    ones = np.ones(len(edges), dtype=np.float64)
    matrix = coo_matrix((ones, (edges[:, 0], edges[:, 1])), shape=(n_nodes, n_nodes))
    return ((matrix + matrix.T) > 0).astype(np.float64)


def hop_distances(n_nodes: int, edges: np.ndarray) -> np.ndarray:
    """All-pairs shortest-path lengths in hops (inf between components)."""
    return shortest_path(adjacency(n_nodes, edges).tocsr(), method="D", unweighted=True, directed=False)


def components(n_nodes: int, edges: np.ndarray) -> list[np.ndarray]:
    """Node indices of each connected component."""
    count, labels = connected_components(adjacency(n_nodes, edges).tocsr(), directed=False)
    return [np.flatnonzero(labels == component) for component in range(count)]


def mds_coordinates(distances: np.ndarray, dim: int) -> np.ndarray:
    """Classical multidimensional scaling of a finite distance matrix into `dim` coordinates (zero-padded)."""
    n = len(distances)
    centring = np.eye(n) - 1.0 / n
    gram = -0.5 * centring @ (distances**2) @ centring
    values, vectors = np.linalg.eigh(gram)
    top = np.argsort(values)[::-1][:dim]
    coordinates = vectors[:, top] * np.sqrt(np.clip(values[top], 0, None))
    if coordinates.shape[1] < dim:
        coordinates = np.pad(coordinates, ((0, 0), (0, dim - coordinates.shape[1])))
    return coordinates
