"""RINGS options that follow the official code (aidos-lab/rings 68a58a4), and the memory and edge_attr fixes."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from stages.methods.graphs.complementarity import graph_complementarity
from stages.methods.graphs.config import AuditConfig, GraphMetricConfig, SeparabilityConfig
from stages.methods.graphs.geometry import component_distances
from stages.methods.graphs.perturbations import (
    PERTURBATIONS,
    dataset_shape,
    index_pairs,
    pair_index,
    perturb,
    undirected_edges,
)


def graph_with_edge_attr(n: int = 8, seed: int = 0) -> Data:
    graph = nx.gnm_random_graph(n, 2 * n - 4, seed=seed)
    pairs = np.array(graph.edges(), dtype=np.int64)
    edge_index = torch.from_numpy(np.concatenate([pairs, pairs[:, ::-1]]).T.copy())
    return Data(
        x=torch.randn(n, 3, generator=torch.Generator().manual_seed(seed)),
        edge_index=edge_index,
        edge_attr=torch.ones(edge_index.shape[1], 2),
        y=torch.tensor([0]),
    )


def test_defaults_are_the_papers():
    config = AuditConfig()
    assert config.separability.pairs == "all" and SeparabilityConfig().pairs == "all"
    assert config.random_graph_semantics == "paper"
    assert config.graph_metric.edgeless == "whole_graph"
    pairs = len(config.modes) * (len(config.modes) - 1) // 2
    assert (
        pairs == 28 and 2 * pairs / 2 ** len(config.seeds) < config.separability.alpha
    )  # Wilcoxon can reject


@pytest.mark.parametrize("mode", PERTURBATIONS.names())
def test_edge_attr_dropped_exactly_when_the_structure_changes(mode):
    graphs = [graph_with_edge_attr(seed=seed) for seed in range(3)]
    changes = PERTURBATIONS.get(mode).changes
    for before, after in zip(graphs, perturb(graphs, mode, 0), strict=True):
        if changes == "structure":
            assert "edge_attr" not in after
        else:
            assert after.edge_attr.shape[0] == after.edge_index.shape[1] == before.edge_index.shape[1]
    assert all("edge_attr" in graph for graph in graphs)  # inputs untouched


def test_pair_indices_round_trip_in_triu_order():
    for n in (2, 3, 7, 40):
        low, high = np.triu_indices(n, k=1)
        pairs = index_pairs(np.arange(len(low)), n)
        assert (pairs[:, 0] == low).all() and (pairs[:, 1] == high).all()
    n = 3_000_000  # 4.5e12 pairs: decoded without materialising them
    indices = np.array([0, 1, n - 2, n - 1, n * (n - 1) // 2 - 2, n * (n - 1) // 2 - 1])
    assert (pair_index(index_pairs(indices, n), n) == indices).all()


@pytest.mark.parametrize("mode", ["random_graph", "random_connected_graph"])
def test_random_graphs_of_huge_sparse_graphs_need_o_of_m_memory(mode):
    n = 200_000  # n(n − 1)/2 = 2e10 candidate pairs: a triu_indices version would need 320 GB
    chain = np.stack([np.arange(n - 1), np.arange(1, n)])
    graph = Data(
        x=torch.zeros(n, 1), edge_index=torch.from_numpy(np.concatenate([chain, chain[::-1]], axis=1))
    )
    result = perturb([graph], mode, 0)[0]
    pairs = undirected_edges(result)
    assert len(pairs) == n - 1 and (pairs[:, 0] < pairs[:, 1]).all()


def test_official_random_graph_draws_edge_index_size_directed_edges():
    graphs = [graph_with_edge_attr(n, seed) for seed, n in enumerate((5, 8, 12, 30))]
    paper = perturb(graphs, "random_graph", 0, dataset_shape(graphs))
    official = perturb(graphs, "random_graph", 0, dataset_shape(graphs, random_graph_semantics="official"))
    for before, ours, theirs in zip(graphs, paper, official, strict=True):
        m = len(undirected_edges(before))
        assert len(undirected_edges(ours)) == m and ours.edge_index.shape[1] == 2 * m
        assert theirs.edge_index.shape[1] == before.edge_index.shape[1] == 2 * m  # 2m entries, one direction
        assert (theirs.edge_index[0] != theirs.edge_index[1]).all()


def test_official_random_connected_graph_is_connected_and_terminates_when_saturated():
    pairs = np.array(nx.complete_graph(6).edges(), dtype=np.int64)
    edge_index = torch.from_numpy(np.concatenate([pairs, pairs[:, ::-1]]).T.copy())
    dense = Data(
        x=torch.zeros(6, 1), edge_index=edge_index
    )  # 2m = 30 > the 15 pairs: the official loop hangs
    shape = dataset_shape([dense], random_graph_semantics="official")
    for seed in range(3):
        result = perturb([dense], "random_connected_graph", seed, shape)[0]
        assert (
            result.edge_index.shape[1] == 15
        )  # capped at the pairs there are (the official loop never ends)
        graph = nx.Graph(result.edge_index.numpy().T.tolist())
        assert nx.is_connected(graph) and graph.number_of_nodes() == 6
    sparse = graph_with_edge_attr(20)
    result = perturb(
        [sparse], "random_connected_graph", 0, dataset_shape([sparse], random_graph_semantics="official")
    )[0]
    assert (
        result.edge_index.shape[1] == sparse.edge_index.shape[1]
    )  # max(2m, n − 1) distinct pairs, stored once
    assert nx.is_connected(nx.Graph(result.edge_index.numpy().T.tolist()))


def official_spectral(adjacency: np.ndarray, metric: str, steps: float) -> np.ndarray:
    """The official rings_heat / rings_diffusion written out with networkx's normalised Laplacian."""
    laplacian = nx.normalized_laplacian_matrix(nx.from_numpy_array(adjacency)).toarray()
    values, vectors = np.linalg.eigh(laplacian)
    weights = np.exp(-steps * values) if metric == "rings_heat" else values**steps
    embedded = vectors * weights
    return np.linalg.norm(embedded[:, None, :] - embedded[None, :, :], axis=-1)


@pytest.mark.parametrize("metric", ["rings_heat", "rings_diffusion"])
def test_official_heat_and_diffusion_definitions(metric):
    adjacency = nx.to_numpy_array(nx.barabasi_albert_graph(10, 2, seed=1))
    config = GraphMetricConfig(metric=metric, heat_time=1.0, diffusion_steps=1)
    distances = component_distances(adjacency, config)
    steps = 1.0
    assert np.allclose(distances, official_spectral(adjacency, metric, steps), atol=1e-12)
    assert np.allclose(distances, distances.T) and np.all(np.diag(distances) == 0)
    if metric == "rings_heat":  # = heat-kernel distance of exp(−2tL) on the normalised Laplacian
        values, vectors = np.linalg.eigh(
            nx.normalized_laplacian_matrix(nx.from_numpy_array(adjacency)).toarray()
        )
        kernel = (vectors * np.exp(-2 * values)) @ vectors.T
        gram = np.diag(kernel)[:, None] + np.diag(kernel)[None, :] - 2 * kernel
        assert np.allclose(distances, np.sqrt(np.clip(gram, 0, None)), atol=1e-7)


def test_edgeless_complementarity_whole_graph_or_per_node():
    features = np.array([[0.0], [1.0], [3.0]])
    no_edges = np.zeros((0, 2), np.int64)
    # whole graph: D_X / 3 = (1/3, 1, 2/3) per pair, twice, over n² − n = 6; D_G = 0
    assert graph_complementarity(features, no_edges) == pytest.approx(2 / 3)
    assert graph_complementarity(features, no_edges, GraphMetricConfig(edgeless="components")) == 0.0
    assert graph_complementarity(features[:1], no_edges) == 0.0
    assert graph_complementarity(np.ones((3, 2)), no_edges) == 0.0  # identical features, nothing to disagree


def test_rerun_of_the_official_code_agrees_with_ours():
    from stages.methods.graphs.complementarity import dataset_complementarity
    from stages.methods.graphs.separability import wilcoxon_permutation_test
    from stages.papers.rings.official_rerun import rerun_functions

    official = rerun_functions()
    graphs = [graph_with_edge_attr(n, seed) for seed, n in enumerate((4, 9, 15))]
    broken = graph_with_edge_attr(10, 7)
    broken.edge_index = broken.edge_index[:, broken.edge_index.max(0).values < 6]  # nodes 6..9 isolated
    edgeless = Data(x=torch.arange(4.0)[:, None], edge_index=torch.zeros((2, 0), dtype=torch.long))
    graphs += [broken, edgeless]
    assert np.allclose(official.complementarity(graphs), dataset_complementarity(graphs), atol=1e-12, rtol=0)
    first = np.linspace(0.8, 0.9, 12)
    second = first - np.linspace(0.01, 0.03, 12)
    assert official.wilcoxon(first, second, 400)["pvalue"] < 0.01
    assert wilcoxon_permutation_test(first, second, 400, 0).p_value < 0.01
    torch.manual_seed(0)
    randomised = official.random_graph(graphs)
    assert [g.edge_index.shape[1] for g in randomised] == [g.edge_index.shape[1] for g in graphs]
