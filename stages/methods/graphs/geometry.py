"""Graph geometry shared by perturbations and complementarity: graph distances, components, node coordinates.

Node coordinates (geometry-derived features): `mds_coordinates` (classical MDS of a distance matrix, used on
hop distances) and `laplacian_eigenmaps` (Belkin & Niyogi: the smoothest non-constant solutions of
L v = λ D v, built from the Laplacian spectrum and not from hop distances).

Distances within a connected component (`component_distances`):
- `shortest_path`: hops;
- `resistance`: effective resistance, R_ij = L⁺_ii + L⁺_jj − 2 L⁺_ij (L⁺ the Laplacian's pseudo-inverse);
- `heat`: heat-kernel distance, √(H_ii + H_jj − 2 H_ij) with H = exp(−t L);
- `diffusion`: diffusion distance after s random-walk steps, √(Σ_k (P^s_ik − P^s_jk)² / π_k), π ∝ degree;
- `rings_heat`, `rings_diffusion`: the official aidos-lab/rings (68a58a4) definitions, on the spectrum
  L = V diag(λ) Vᵀ of the symmetric normalised Laplacian I − D^(−1/2) A D^(−1/2): Euclidean distances
  between the rows of V diag(exp(−tλ)) (heat, t = `heat_time`) or of V diag(λ^s) (diffusion,
  s = `diffusion_steps`). rings_heat is the heat-kernel distance of exp(−2tL) of the normalised Laplacian;
  rings_diffusion weighs high frequencies up (λ^s, not (1 − λ)^s), so it is not a random-walk diffusion.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import eigh
from scipy.sparse import coo_matrix, csr_matrix
from scipy.sparse.csgraph import connected_components, shortest_path
from scipy.spatial.distance import cdist

from stages.methods.graphs.config import GraphMetricConfig


def adjacency(n_nodes: int, edges: np.ndarray) -> coo_matrix:
    """Symmetric unweighted adjacency of `n_nodes` nodes from undirected (or directed) edge pairs (m × 2)."""
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    ones = np.ones(len(edges), dtype=np.float64)
    matrix = coo_matrix((ones, (edges[:, 0], edges[:, 1])), shape=(n_nodes, n_nodes))
    return ((matrix + matrix.T) > 0).astype(np.float64)


def hop_distances(n_nodes: int, edges: np.ndarray) -> np.ndarray:
    """All-pairs shortest-path lengths in hops (inf between components)."""
    return shortest_path(adjacency(n_nodes, edges).tocsr(), method="D", unweighted=True, directed=False)


def dense_adjacency(n_nodes: int, edges: np.ndarray) -> np.ndarray:
    """Symmetric unweighted adjacency as a dense array (n × n) from edge pairs (m × 2)."""
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    matrix = np.zeros((n_nodes, n_nodes))
    matrix[edges[:, 0], edges[:, 1]] = 1.0
    matrix[edges[:, 1], edges[:, 0]] = 1.0
    return matrix


def components(n_nodes: int, edges: np.ndarray) -> list[np.ndarray]:
    """Node indices of each connected component."""
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    one_way = csr_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n_nodes, n_nodes))
    count, labels = connected_components(one_way, directed=False)
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


def laplacian_eigenmaps(adjacency_matrix: np.ndarray, dim: int) -> np.ndarray:
    """Laplacian eigenmaps of one connected component (dense 0/1 adjacency, k × k) in `dim` coordinates.

    The eigenvectors of L v = λ D v (L = D − A) for the `dim` smallest eigenvalues after the constant one,
    each D-normalised (vᵀ D v = 1); zero-padded when the component has fewer than `dim` + 1 nodes, zeros for
    an isolated node.
    """
    size = len(adjacency_matrix)
    coordinates = np.zeros((size, dim))
    if size < 2:
        return coordinates
    degrees = adjacency_matrix.sum(axis=1)
    _, vectors = eigh(np.diag(degrees) - adjacency_matrix, np.diag(degrees))
    smooth = vectors[:, 1 : dim + 1]
    coordinates[:, : smooth.shape[1]] = smooth
    return coordinates


def component_distances(adjacency_matrix: np.ndarray, config: GraphMetricConfig) -> np.ndarray:
    """Node distances of one connected component (dense symmetric 0/1 adjacency, k × k)."""
    if config.metric == "shortest_path":
        return shortest_path(adjacency_matrix, method="D", unweighted=True, directed=False)
    degrees = adjacency_matrix.sum(axis=1)
    if config.metric in ("rings_heat", "rings_diffusion"):
        return _rings_spectral_distances(adjacency_matrix, degrees, config)
    if config.metric == "diffusion":
        steps = np.linalg.matrix_power(adjacency_matrix / degrees[:, None], config.diffusion_steps)
        scaled = steps / np.sqrt(degrees / degrees.sum())[None, :]
        return np.sqrt(_gram_distances(scaled @ scaled.T))
    laplacian = np.diag(degrees) - adjacency_matrix
    if config.metric == "resistance":
        return _gram_distances(np.linalg.pinv(laplacian, hermitian=True))
    values, vectors = np.linalg.eigh(laplacian)
    return np.sqrt(_gram_distances((vectors * np.exp(-config.heat_time * values)) @ vectors.T))


def _gram_distances(gram: np.ndarray) -> np.ndarray:
    """G_ii + G_jj − 2 G_ij, clipped at 0 and with an exact zero diagonal."""
    diagonal = np.diag(gram)
    distances = np.clip(diagonal[:, None] + diagonal[None, :] - 2 * gram, 0.0, None)
    np.fill_diagonal(distances, 0.0)
    return distances


def _rings_spectral_distances(
    adjacency_matrix: np.ndarray, degrees: np.ndarray, config: GraphMetricConfig
) -> np.ndarray:
    """The official RINGS heat / diffusion distances (connected component, every degree > 0)."""
    scale = 1.0 / np.sqrt(degrees)
    laplacian = np.eye(len(degrees)) - scale[:, None] * adjacency_matrix * scale[None, :]
    values, vectors = np.linalg.eigh(laplacian)
    if config.metric == "rings_heat":
        weights = np.exp(-config.heat_time * values)
    else:
        weights = np.power(values, config.diffusion_steps)
    embedded = vectors * weights[None, :]
    return cdist(embedded, embedded)
