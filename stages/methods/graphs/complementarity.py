"""Mode complementarity: how much the geometry of the node features disagrees with the graph's geometry.

Per connected component of k nodes: D_X = Euclidean distances between node features, D_G = hop distances
(or resistance, heat-kernel or diffusion distances, `GraphMetricConfig`), each divided by its maximum (left
as is when all zero); score = ‖D_X − D_G‖₁ / (k² − k) (0 for a single node).
A graph's score is the size-weighted mean over its components; a dataset's is the mean over its graphs.
0 means the features redraw the graph's geometry; values near 1 mean the two modes say different things.

A graph without edges (`GraphMetricConfig.edgeless`): `whole_graph` (default, the official code) lifts it as
one space with D_G = 0, so its score is the mean normalised feature distance (the graph says nothing the
features do not contradict); `components` takes each isolated node as a component, which scores 0.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
from scipy.spatial.distance import cdist

from stages.core.progress import progress
from stages.methods.graphs.config import AuditConfig
from stages.methods.graphs.geometry import (
    GraphMetricConfig,
    adjacency,
    component_distances,
    components,
    hop_distances,
)
from stages.methods.graphs.loading import load_pyg
from stages.methods.graphs.perturbations import dataset_shape, perturb

HOPS = GraphMetricConfig()

if TYPE_CHECKING:
    from torch_geometric.data import Data


def _normalised(distances: np.ndarray) -> np.ndarray:
    top = distances.max() if distances.size else 0.0
    return distances / top if top > 0 else distances


def component_graph_distances(
    n_nodes: int, edges: np.ndarray, metric: GraphMetricConfig = HOPS
) -> list[tuple[np.ndarray, np.ndarray]]:
    """(node indices, graph distances among them) per connected component."""
    if metric.metric == "shortest_path":  # one sparse all-pairs search for the whole graph
        hops = hop_distances(n_nodes, edges)
        return [(nodes, hops[np.ix_(nodes, nodes)]) for nodes in components(n_nodes, edges)]
    dense = adjacency(n_nodes, edges).toarray()
    return [
        (nodes, component_distances(dense[np.ix_(nodes, nodes)], metric))
        for nodes in components(n_nodes, edges)
    ]


def graph_complementarity(features: np.ndarray, edges: np.ndarray, metric: GraphMetricConfig = HOPS) -> float:
    """Complementarity of one graph: node features (n × d) and undirected edges (m × 2)."""
    n = len(features)
    if n == 0:
        raise ValueError("a graph without nodes has no complementarity")
    if len(edges) == 0 and metric.edgeless == "whole_graph":
        return _edgeless_complementarity(features)
    total = 0.0
    for nodes, graph_distances in component_graph_distances(n, edges, metric):
        size = len(nodes)
        if size < 2:
            continue
        feature_distances = _normalised(cdist(features[nodes], features[nodes]))
        difference = np.abs(feature_distances - _normalised(graph_distances)).sum()
        total += size * difference / (size * size - size)
    return total / n


def _edgeless_complementarity(features: np.ndarray) -> float:
    """‖D_X / max D_X − 0‖₁ / (n² − n) of an edgeless graph lifted whole (0 for one node)."""
    n = len(features)
    return float(_normalised(cdist(features, features)).sum() / (n * n - n)) if n > 1 else 0.0


def dataset_complementarity(
    graphs: list[Data], metric: GraphMetricConfig = HOPS, desc: str | None = None
) -> np.ndarray:
    """Complementarity per graph of a torch_geometric dataset."""
    from stages.methods.graphs.perturbations import undirected_edges

    items = graphs if desc is None else progress(graphs, desc=desc, total=len(graphs))
    return np.asarray(
        [
            graph_complementarity(graph.x.numpy().astype(np.float64), undirected_edges(graph), metric)
            for graph in items
        ]
    )


def complementarity_results(datasets: Mapping[str, Path], config: AuditConfig, seed: int) -> pl.DataFrame:
    """Mean complementarity per dataset under each feature mode in `config.complementarity_modes`."""
    rows = []
    for name, folder in datasets.items():
        graphs = load_pyg(folder)
        shape = dataset_shape(graphs, config.geometric_dim, config.random_graph_semantics)
        for mode in config.complementarity_modes:
            started = time.perf_counter()
            values = dataset_complementarity(
                perturb(graphs, mode, seed, shape), config.graph_metric, desc=f"complementarity {name}/{mode}"
            )
            rows.append(
                {
                    "dataset": name,
                    "mode": mode,
                    "graphs": len(values),
                    "mean": float(values.mean()),
                    "std": float(values.std()),
                    "median": float(np.median(values)),
                    "seconds": round(time.perf_counter() - started, 3),
                }
            )
    return pl.DataFrame(rows)
