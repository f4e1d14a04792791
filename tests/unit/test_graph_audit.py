"""RINGS methods: perturbations, the permutation tests, complementarity, verdicts."""

from __future__ import annotations

import networkx as nx
import numpy as np
import polars as pl
import pytest
from scipy.stats import ks_2samp, wilcoxon

from stages.datasets.graphs.controls import ControlParams, structure_control
from stages.datasets.graphs.table import to_pyg
from stages.methods.graphs.complementarity import graph_complementarity
from stages.methods.graphs.perturbations import PERTURBATIONS, dataset_shape, perturb, undirected_edges
from stages.methods.graphs.separability import (
    SeparabilityConfig,
    compare_modes,
    ks_permutation_test,
    separable_pairs,
    wilcoxon_permutation_test,
)
from stages.methods.graphs.verdicts import dataset_verdicts


@pytest.fixture(scope="module")
def graphs():
    params = ControlParams(graphs=12, min_nodes=6, max_nodes=12, structure_features="noise", feature_dim=3)
    return to_pyg(structure_control(params, seed=0))


def nx_graph(graph) -> nx.Graph:
    result = nx.empty_graph(graph.num_nodes)
    result.add_edges_from(undirected_edges(graph).tolist())
    return result


@pytest.mark.parametrize("mode", PERTURBATIONS.names())
def test_every_perturbation_keeps_nodes_labels_and_is_seeded(graphs, mode):
    first, again, other = perturb(graphs, mode, 0), perturb(graphs, mode, 0), perturb(graphs, mode, 1)
    for before, after in zip(graphs, first, strict=True):
        assert after.num_nodes == before.num_nodes and after.y.item() == before.y.item()
        assert after.x.shape[0] == before.num_nodes and after.x.dtype == before.x.dtype
        edges = after.edge_index.numpy()
        assert sorted(map(tuple, edges.T)) == sorted(map(tuple, edges[::-1].T))  # stored in both directions
    assert all(
        (a.x == b.x).all() and (a.edge_index.shape == b.edge_index.shape)
        for a, b in zip(first, again, strict=True)
    )
    if mode in ("random_features", "shuffled_features", "random_graph", "random_connected_graph"):
        assert any(
            not a.x.equal(b.x) or not a.edge_index.equal(b.edge_index)
            for a, b in zip(first, other, strict=True)
        )


def test_feature_perturbations_have_the_promised_shapes(graphs):
    shape = dataset_shape(graphs, geometric_dim=3)
    assert shape.max_nodes == max(graph.num_nodes for graph in graphs)
    modes = (
        "empty_features",
        "complete_features",
        "random_features",
        "shuffled_features",
        "geometric_features",
        "spectral_features",
    )
    perturbed = [perturb(graphs, mode, 0, shape) for mode in modes]
    for before, empty, complete, random, shuffled, geometric, spectral in zip(
        graphs, *perturbed, strict=True
    ):
        n = before.num_nodes
        assert empty.x.shape == (n, 1) and not empty.x.any()
        assert (
            complete.x.shape == (n, shape.max_nodes) and (complete.x.argmax(1).numpy() == np.arange(n)).all()
        )
        assert random.x.shape == before.x.shape
        assert sorted(map(tuple, shuffled.x.tolist())) == sorted(map(tuple, before.x.tolist()))
        assert geometric.x.shape == (n, 3) and spectral.x.shape == (n, 3)
        assert empty.edge_index.equal(before.edge_index)


def test_structure_perturbations_have_the_promised_edges(graphs):
    for before, empty, complete, random, connected in zip(
        graphs, *(perturb(graphs, mode, 0) for mode in
                  ("empty_graph", "complete_graph", "random_graph", "random_connected_graph")),
        strict=True,
    ):  # fmt: skip
        n, m = before.num_nodes, len(undirected_edges(before))
        assert empty.edge_index.shape[1] == 0
        assert len(undirected_edges(complete)) == n * (n - 1) // 2
        assert len(undirected_edges(random)) == m
        assert nx.is_connected(nx_graph(connected)) and len(undirected_edges(connected)) == max(m, n - 1)
        assert random.x.equal(before.x) and connected.x.equal(before.x)


def test_ks_permutation_matches_scipy_exact_and_rejects_full_separation():
    rng = np.random.default_rng(3)
    first, second = rng.normal(size=12), rng.normal(0.8, 1, size=12)
    result = ks_permutation_test(first, second, 10_000, seed=0)
    reference = ks_2samp(first, second, method="exact")
    assert result.statistic == pytest.approx(reference.statistic)
    assert result.p_value == pytest.approx(reference.pvalue, abs=0.02)
    separated = ks_permutation_test(np.full(12, 0.9), np.linspace(0.4, 0.6, 12), 10_000, seed=0)
    assert separated.statistic == 1.0 and separated.p_value < 0.001
    same = ks_permutation_test(np.linspace(0, 1, 12), np.linspace(0, 1, 12), 10_000, seed=0)
    assert same.statistic == 0.0 and same.p_value == 1.0


def test_wilcoxon_sign_swap_matches_scipy_exact_and_its_floor():
    rng = np.random.default_rng(4)
    first = rng.normal(size=12)
    second = first + rng.normal(0.4, 1, size=12)
    result = wilcoxon_permutation_test(first, second, 10_000, seed=0)
    reference = wilcoxon(first, second, method="exact")
    assert result.p_value == pytest.approx(reference.pvalue, abs=0.02)
    always_higher = wilcoxon_permutation_test(np.arange(12) + 1.0, np.arange(12), 10_000, seed=0)
    assert always_higher.smallest_possible_p == 2.0**-11
    assert always_higher.p_value == pytest.approx(2.0**-11, abs=6e-4)
    assert wilcoxon_permutation_test(np.ones(5), np.ones(5), 10_000, seed=0).p_value == 1.0


def score_table(means: dict[str, float], seeds: int = 12, spread: float = 0.01) -> pl.DataFrame:
    rng = np.random.default_rng(0)
    rows = [
        {"mode": mode, "seed": seed, "score": mean + spread * rng.standard_normal()}
        for mode, mean in means.items()
        for seed in range(seeds)
    ]
    return pl.DataFrame(rows)


def test_compare_modes_applies_bonferroni_over_the_pairs():
    scores = score_table({"original": 0.9, "empty_graph": 0.5, "empty_features": 0.9})
    config = SeparabilityConfig(permutations=5000, pairs="against_original")
    results = compare_modes(scores, config, seed=0)
    assert set(results["hypotheses"]) == {2}
    assert (results["p_adjusted"] == (results["p_value"] * 2).clip(upper_bound=1.0)).all()
    pairs = separable_pairs(results)
    assert pairs.filter(pl.col("mode_b") == "empty_graph")["separable"].item()
    assert not pairs.filter(pl.col("mode_b") == "empty_features")["separable"].item()
    every = compare_modes(scores, SeparabilityConfig(permutations=500), seed=0)  # the default: all pairs
    assert set(every["hypotheses"]) == {3}
    assert len(every) == 3 * 2


def test_too_few_seeds_can_never_be_separable():
    scores = score_table({"original": 0.9, "empty_graph": 0.5}, seeds=5)
    results = compare_modes(scores, SeparabilityConfig(permutations=5000), seed=0)
    wilcoxon_row = results.filter(pl.col("test") == "wilcoxon").row(0, named=True)
    assert wilcoxon_row["smallest_possible_p_adjusted"] == 2.0**-4 and not wilcoxon_row["significant"]


def test_unpaired_seeds_are_refused():
    scores = score_table({"original": 0.9, "empty_graph": 0.5}).filter(
        ~((pl.col("mode") == "empty_graph") & (pl.col("seed") == 3))
    )
    with pytest.raises(ValueError, match="different seeds; the test is paired"):
        compare_modes(scores, SeparabilityConfig(permutations=500), seed=0)


def test_complementarity_of_hand_computed_graphs():
    path = np.array([[0, 1], [1, 2]])
    assert graph_complementarity(np.array([[0.0], [1.0], [2.0]]), path) == 0.0  # features redraw the path
    # features 0, 2, 1 on the path: |D_X − D_G| / max = .5, .5, 0 per pair → 2 / (9 − 3)
    assert graph_complementarity(np.array([[0.0], [2.0], [1.0]]), path) == pytest.approx(1 / 3)
    # constant features: D_X = 0, so the score is the mean normalised hop distance (.5 + .5 + 1) · 2 / 6
    assert graph_complementarity(np.ones((3, 2)), path) == pytest.approx(2 / 3)
    # components weighted by size: the path above (3 nodes, 1/3) and an isolated node (score 0)
    features = np.array([[0.0], [2.0], [1.0], [7.0]])
    assert graph_complementarity(features, path) == pytest.approx((3 * (1 / 3) + 1 * 0) / 4)
    assert graph_complementarity(np.zeros((4, 1)), np.zeros((0, 2))) == 0.0


def verdict_inputs(structure: float, features: float) -> tuple[pl.DataFrame, pl.DataFrame]:
    scores = score_table({"original": 0.95, "empty_graph": structure, "empty_features": features})
    separability = compare_modes(scores, SeparabilityConfig(permutations=5000), seed=0)
    runs = scores.rename({"score": "auroc"}).with_columns(pl.lit("gnn").alias("model"))
    return separability, runs


@pytest.mark.parametrize(
    ("structure", "features", "category"),
    [(0.5, 0.5, "both"), (0.5, 0.95, "structure"), (0.95, 0.5, "features"), (0.95, 0.95, "neither")],
)
def test_verdict_categories(structure, features, category):
    separability, runs = verdict_inputs(structure, features)
    frame = separability.select(pl.lit("d").alias("dataset"), pl.lit("gnn").alias("model"), pl.all())
    verdicts = dataset_verdicts(frame, runs.with_columns(pl.lit("d").alias("dataset")), "auroc")
    assert verdicts["category"].to_list() == [category]


def test_ranking_puts_both_modes_first():
    frames, runs = [], []
    for name, (structure, features) in {
        "feat": (0.95, 0.5),
        "both": (0.5, 0.5),
        "none": (0.95, 0.95),
    }.items():
        separability, own_runs = verdict_inputs(structure, features)
        frames.append(
            separability.select(pl.lit(name).alias("dataset"), pl.lit("gnn").alias("model"), pl.all())
        )
        runs.append(own_runs.with_columns(pl.lit(name).alias("dataset")))
    verdicts = dataset_verdicts(pl.concat(frames), pl.concat(runs, how="diagonal"), "auroc")
    assert verdicts["dataset"].to_list() == ["both", "feat", "none"]
    assert verdicts["rank"].to_list() == [1, 2, 3]


@pytest.mark.parametrize("metric", ["shortest_path", "resistance", "heat", "diffusion"])
def test_graph_metrics_are_symmetric_distances(metric):
    from stages.methods.graphs.geometry import GraphMetricConfig, component_distances

    graph = nx.barabasi_albert_graph(12, 2, seed=0)
    distances = component_distances(nx.to_numpy_array(graph), GraphMetricConfig(metric=metric))
    assert np.allclose(distances, distances.T) and np.all(np.diag(distances) == 0)
    off_diagonal = distances[~np.eye(12, dtype=bool)]
    if metric == "diffusion":  # a pseudo-metric: nodes with the same walk distribution sit at distance 0
        assert np.all(off_diagonal >= 0) and np.mean(off_diagonal > 0) > 0.9
    else:
        assert np.all(off_diagonal > 0)


def test_resistance_and_diffusion_by_hand():
    from stages.methods.graphs.geometry import GraphMetricConfig, component_distances

    triangle = nx.to_numpy_array(nx.complete_graph(3))
    resistance = component_distances(triangle, GraphMetricConfig(metric="resistance"))
    assert np.allclose(resistance[~np.eye(3, dtype=bool)], 2 / 3)  # 1 Ω in parallel with 2 Ω
    path = nx.to_numpy_array(nx.path_graph(4))
    assert np.allclose(component_distances(path, GraphMetricConfig(metric="resistance")), [
        [0, 1, 2, 3], [1, 0, 1, 2], [2, 1, 0, 1], [3, 2, 1, 0]])  # fmt: skip
    # one step on the 3-star from the centre (degree 3) vs a leaf (degree 1): P rows (0,⅓,⅓,⅓) and (1,0,0,0)
    star = nx.to_numpy_array(nx.star_graph(3))
    diffusion = component_distances(star, GraphMetricConfig(metric="diffusion", diffusion_steps=1))
    stationary = np.array([3, 1, 1, 1]) / 6
    expected = np.sqrt(((np.array([0, 1, 1, 1]) / 3 - np.array([1, 0, 0, 0])) ** 2 / stationary).sum())
    assert diffusion[0, 1] == pytest.approx(expected)


def test_complementarity_with_resistance_on_a_triangle():
    from stages.methods.graphs.geometry import GraphMetricConfig

    triangle = np.array([[0, 1], [1, 2], [0, 2]])
    constant = np.ones((3, 1))
    assert graph_complementarity(constant, triangle, GraphMetricConfig(metric="resistance")) == pytest.approx(
        1.0
    )


def test_laplacian_eigenmaps_solve_the_generalised_problem_and_differ_from_an_mds_of_hops():
    from scipy.linalg import eigh

    from stages.methods.graphs.geometry import hop_distances, laplacian_eigenmaps, mds_coordinates

    graph = nx.barabasi_albert_graph(10, 2, seed=1)
    adjacency = nx.to_numpy_array(graph)
    degrees = np.diag(adjacency.sum(axis=1))
    coordinates = laplacian_eigenmaps(adjacency, 3)
    values = eigh(degrees - adjacency, degrees, eigvals_only=True)
    for column, value in zip(
        coordinates.T, values[1:4], strict=True
    ):  # L v = λ D v, D-normalised, not constant
        assert np.allclose((degrees - adjacency) @ column, value * degrees @ column)
        assert column @ degrees @ column == pytest.approx(1.0) and column.std() > 0
    hops = mds_coordinates(hop_distances(10, np.array(graph.edges)), 3)
    assert not np.allclose(np.abs(np.corrcoef(coordinates.T, hops.T)[:3, 3:]).max(axis=1), 1.0)
    assert laplacian_eigenmaps(nx.to_numpy_array(nx.path_graph(3)), 4)[:, 2:].tolist() == [[0, 0]] * 3
    assert not laplacian_eigenmaps(np.zeros((1, 1)), 2).any()  # an isolated node sits at the origin


def test_modes_complementarity_shares_the_lift_and_matches_graph_by_graph(graphs):
    from stages.methods.graphs.complementarity import modes_complementarity
    from stages.methods.graphs.geometry import GraphMetricConfig

    modes = {mode: perturb(graphs, mode, 0) for mode in ("original", "spectral_features", "random_graph")}
    for metric in ("shortest_path", "rings_heat"):
        config = GraphMetricConfig(metric=metric)
        found = modes_complementarity(graphs, modes, config)
        for mode, perturbed in modes.items():
            expected = [
                graph_complementarity(graph.x.numpy().astype(np.float64), undirected_edges(graph), config)
                for graph in perturbed
            ]
            assert found[mode] == pytest.approx(expected, abs=1e-12), (metric, mode)


def test_complementarity_results_keep_per_graph_values_for_every_metric(tmp_path, graphs):
    from stages.datasets.graphs.table import from_pyg, write_graph_tables
    from stages.methods.graphs.complementarity import complementarity_results
    from stages.methods.graphs.config import AuditConfig

    write_graph_tables(from_pyg(graphs), tmp_path / "d")
    table = complementarity_results({"d": tmp_path / "d"}, AuditConfig(), seed=0)
    assert table["metric"].unique(maintain_order=True).to_list() == [
        "shortest_path",
        "rings_heat",
        "rings_diffusion",
    ]
    assert table["mode"].unique(maintain_order=True).to_list() == [
        "original", "random_features", "geometric_features", "spectral_features"]  # fmt: skip
    for row in table.iter_rows(named=True):
        assert len(row["values"]) == row["graphs"] == len(graphs)
        assert row["mean"] == pytest.approx(np.mean(row["values"]))
