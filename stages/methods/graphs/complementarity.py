"""Mode complementarity: how much the geometry of the node features disagrees with the graph's geometry.

Per connected component of k nodes: D_X = Euclidean distances between node features, D_G = hop distances
(or resistance, heat-kernel or diffusion distances, `GraphMetricConfig`), each divided by its maximum (left
as is when all zero); score = ‖D_X − D_G‖₁ / (k² − k) (0 for a single node).
A graph's score is the size-weighted mean over its components; a dataset's is the mean over its graphs.
0 means the features redraw the graph's geometry; values near 1 mean the two modes say different things.
`complementarity_results` measures every D_G in `AuditConfig.graph_metrics` (the primary
`graph_metric.metric`, then `extra_graph_metrics`) and keeps the per-graph values, so feature modes can be
compared graph by graph (paired).

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
    component_distances,
    components,
    dense_adjacency,
    hop_distances,
)
from stages.methods.graphs.loading import load_pyg
from stages.methods.graphs.modes import MODES
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
    dense = dense_adjacency(n_nodes, edges)
    return [
        (
            nodes,
            component_distances(dense[np.ix_(nodes, nodes)], metric) if len(nodes) > 1 else np.zeros((1, 1)),
        )
        for nodes in components(n_nodes, edges)
    ]


Structure = list[tuple[np.ndarray, np.ndarray]] | None
"""A graph lifted by D_G: (node indices, normalised D_G) per component of ≥ 2 nodes, or None for an edgeless
graph lifted whole (`edgeless: whole_graph`)."""


def lift_structure(n_nodes: int, edges: np.ndarray, metric: GraphMetricConfig = HOPS) -> Structure:
    """The graph side of the complementarity, computed once and reusable for any node features."""
    if n_nodes == 0:
        raise ValueError("a graph without nodes has no complementarity")
    if len(edges) == 0 and metric.edgeless == "whole_graph":
        return None
    return [
        (nodes, _normalised(distances))
        for nodes, distances in component_graph_distances(n_nodes, edges, metric)
        if len(nodes) > 1
    ]


def features_complementarity(features: np.ndarray, structure: Structure) -> float:
    """Complementarity of node features (n × d) with a lifted graph (:func:`lift_structure`)."""
    if structure is None:
        return _edgeless_complementarity(features)
    total = 0.0
    for nodes, graph_distances in structure:
        size = len(nodes)
        feature_distances = _normalised(cdist(features[nodes], features[nodes]))
        total += size * np.abs(feature_distances - graph_distances).sum() / (size * size - size)
    return total / len(features)


def graph_complementarity(features: np.ndarray, edges: np.ndarray, metric: GraphMetricConfig = HOPS) -> float:
    """Complementarity of one graph: node features (n × d) and undirected edges (m × 2)."""
    return features_complementarity(features, lift_structure(len(features), edges, metric))


def _edgeless_complementarity(features: np.ndarray) -> float:
    """‖D_X / max D_X − 0‖₁ / (n² − n) of an edgeless graph lifted whole (0 for one node)."""
    n = len(features)
    return float(_normalised(cdist(features, features)).sum() / (n * n - n)) if n > 1 else 0.0


def _features(graph: Data) -> np.ndarray:
    return graph.x.numpy().astype(np.float64)


def dataset_complementarity(
    graphs: list[Data], metric: GraphMetricConfig = HOPS, desc: str | None = None
) -> np.ndarray:
    """Complementarity per graph of a torch_geometric dataset."""
    from stages.methods.graphs.perturbations import undirected_edges

    items = graphs if desc is None else progress(graphs, desc=desc, total=len(graphs))
    return np.asarray(
        [graph_complementarity(_features(graph), undirected_edges(graph), metric) for graph in items]
    )


def modes_complementarity(
    graphs: list[Data], modes: Mapping[str, list[Data]], metric: GraphMetricConfig, desc: str | None = None
) -> dict[str, np.ndarray]:
    """Complementarity per graph under each perturbed dataset in `modes` (name → graphs, aligned with `graphs`).

    Modes that keep the structure (`original` and feature perturbations) share one lift of each original graph;
    a structure perturbation is lifted on its own edges.
    """
    from stages.methods.graphs.perturbations import undirected_edges

    keeps = [name for name in modes if MODES[name][0] != "structure"]
    values: dict[str, list[float]] = {name: [] for name in modes}
    items = range(len(graphs)) if desc is None else progress(range(len(graphs)), desc=desc, total=len(graphs))
    for index in items:
        shared = lift_structure(graphs[index].num_nodes, undirected_edges(graphs[index]), metric)
        for name, perturbed in modes.items():
            graph = perturbed[index]
            lifted = (
                shared if name in keeps else lift_structure(graph.num_nodes, undirected_edges(graph), metric)
            )
            values[name].append(features_complementarity(_features(graph), lifted))
    return {name: np.asarray(found) for name, found in values.items()}


def complementarity_results(datasets: Mapping[str, Path], config: AuditConfig, seed: int) -> pl.DataFrame:
    """Complementarity per dataset, graph metric (`config.graph_metrics`) and mode (`config.complementarity_modes`):
    summary statistics and the per-graph values (graph order of the dataset)."""
    from threadpoolctl import threadpool_limits

    rows = []
    for name, folder in datasets.items():
        with threadpool_limits(1):  # thousands of tiny eigendecompositions: threads only add overhead
            rows += _dataset_rows(name, load_pyg(folder), config, seed)
    return pl.DataFrame(rows)


def _dataset_rows(name: str, graphs: list[Data], config: AuditConfig, seed: int) -> list[dict]:
    """The table rows of one dataset: one per graph metric and mode."""
    shape = dataset_shape(graphs, config.geometric_dim, config.random_graph_semantics)
    perturbed = {mode: perturb(graphs, mode, seed, shape) for mode in config.complementarity_modes}
    rows = []
    for metric in config.graph_metrics:
        started = time.perf_counter()
        found = modes_complementarity(
            graphs, perturbed, metric, desc=f"complementarity {name}/{metric.metric}"
        )
        seconds = round(time.perf_counter() - started, 3)
        rows += [
            {
                "dataset": name,
                "metric": metric.metric,
                "mode": mode,
                "graphs": len(values),
                "mean": float(values.mean()),
                "std": float(values.std()),
                "median": float(np.median(values)),
                "values": values.tolist(),
                "seconds": seconds,
            }
            for mode, values in found.items()
        ]
    return rows
