"""Benchmark only: the official RINGS functions, or a re-run of their algorithm when the package is absent.

`official_functions()` returns the functions `icml25 bench rings` times against this project's:

- the real ones, from the `rings` package of the PyPI sdist `rings-evaluation==0.1.0` (its wheel is empty):
  importable when installed (`pip install --no-deps --no-binary rings-evaluation rings-evaluation==0.1.0`;
  its code needs only torch, torch_geometric, networkx, scikit-learn, scipy, pandas, joblib and tqdm, all
  already here) or when `RINGS_OFFICIAL_SOURCE` names an unpacked sdist folder;
- otherwise a faithful re-run, below, of aidos-lab/rings commit 68a58a4 (`ComplementarityFunctor` with
  `shortest_path_distance` and `MatrixNormComparator`, `KSComparator`, `WilcoxonComparator`, `RandomGraph`):
  the same library calls in the same order, written for this benchmark, not copied. Nothing else imports it.

Its p-values are the official ones on purpose: the share of permuted statistics ≥ the observed, without the
+1 (so they can be 0 and sit below the design floor); the pipeline's tests (`stages.methods.graphs.separability`)
use p = (1 + k) / (1 + B) or exact enumeration, so the benchmark's decision comparison can differ at the floor.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np
from scipy.stats import ks_2samp, wilcoxon

OFFICIAL_COMMIT = "68a58a4"


@dataclass(frozen=True)
class OfficialFunctions:
    """Complementarity of a list of `Data`, the two permutation tests, the random-graph transform."""

    source: str
    complementarity: Callable[[list], np.ndarray]
    ks: Callable[[np.ndarray, np.ndarray, int], dict]
    wilcoxon: Callable[[np.ndarray, np.ndarray, int], dict]
    random_graph: Callable[[list], list]


def official_functions() -> OfficialFunctions:
    """The real package's functions when importable, else the re-run (its `source` says which)."""
    folder = os.environ.get("RINGS_OFFICIAL_SOURCE")
    if folder and folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        functor = importlib.import_module("rings.complementarity.functor")
        comparators = importlib.import_module("rings.separability.comparator")
        transforms = importlib.import_module("rings.perturbations")
    except ImportError:
        return rerun_functions()
    comparators.tqdm = lambda iterable, **_: iterable  # no progress bar per test (and none of its overhead)
    complementarity = functor.ComplementarityFunctor(
        feature_metric="euclidean",
        graph_metric="shortest_path_distance",
        comparator=importlib.import_module("rings.complementarity.comparator").MatrixNormComparator,
        n_jobs=1,
    )
    return OfficialFunctions(
        source=f"rings-evaluation {getattr(importlib.import_module('rings'), '__version__', '?')} "
        f"(official package, {os.path.dirname(os.path.dirname(functor.__file__))})",
        complementarity=lambda graphs: complementarity(graphs)["complementarity"].to_numpy(np.float64),
        ks=lambda x, y, permutations: comparators.KSComparator()(x, y, n_permutations=permutations),
        wilcoxon=lambda x, y, permutations: comparators.WilcoxonComparator()(
            x, y, n_permutations=permutations
        ),
        random_graph=lambda graphs: _each(transforms.RandomGraph(), graphs),
    )


def _each(transform: Callable, graphs: list) -> list:
    """One transform object (one generator) over copies of the graphs, as a dataset transform runs."""
    return [transform(graph.clone()) for graph in graphs]


def rerun_functions() -> OfficialFunctions:
    """The re-run of the official algorithm (commit 68a58a4)."""
    return OfficialFunctions(
        source=f"re-run of aidos-lab/rings {OFFICIAL_COMMIT} (stages/papers/rings/official_rerun.py)",
        complementarity=lambda graphs: np.asarray([rerun_complementarity(graph) for graph in graphs]),
        ks=rerun_ks,
        wilcoxon=rerun_wilcoxon,
        random_graph=rerun_random_graph,
    )


def _normalise(matrix: np.ndarray) -> np.ndarray:
    top = np.max(matrix)
    return matrix / top if top > 0 else matrix


def _component_score(features: np.ndarray, graph: nx.Graph) -> float:
    from sklearn.metrics.pairwise import pairwise_distances

    n = graph.number_of_nodes()
    hops = np.zeros((n, n)) if graph.number_of_edges() == 0 else nx.floyd_warshall_numpy(graph)
    difference = np.abs(_normalise(pairwise_distances(features, metric="euclidean")) - _normalise(hops))
    return float(difference.sum() / (n * n - n if n > 1 else 1))


def rerun_complementarity(data: Any) -> float:
    """ComplementarityFunctor._process_single: lift to networkx, per component unless connected or edgeless.

    The official code takes a component's features as `X[list(C)]` (set order) and its hops in the
    subgraph's node order; both are node-id order for the small graphs here, as `nx.connected_components`
    yields sets of small ints.
    """
    from torch_geometric.utils import to_networkx

    graph = to_networkx(data, to_undirected=True, node_attrs=["x"])
    features = np.asarray(list(nx.get_node_attributes(graph, "x").values()))
    if graph.number_of_edges() == 0 or nx.is_connected(graph):
        return _component_score(features, graph)
    parts = list(nx.connected_components(graph))
    scores = [_component_score(features[list(part)], graph.subgraph(part)) for part in parts]
    return float(np.average(scores, weights=[len(part) for part in parts]))


def rerun_ks(x: np.ndarray, y: np.ndarray, permutations: int, random_state: int = 42) -> dict:
    """KSComparator: one `ks_2samp` per permutation of the pooled scores, p = share ≥ observed."""
    x, y = np.array(x), np.array(y)
    if np.array_equal(x, y):
        return {"score": 0.0, "pvalue": 1.0}
    rng = np.random.RandomState(random_state)
    observed = ks_2samp(x, y).statistic
    combined = np.concatenate((x, y))
    permuted = np.zeros(permutations)
    for index in range(permutations):
        shuffled = rng.permutation(combined)
        permuted[index] = ks_2samp(shuffled[: len(x)], shuffled[len(x) :]).statistic
    return {"score": observed, "pvalue": float(np.mean(permuted >= observed))}


def rerun_wilcoxon(x: np.ndarray, y: np.ndarray, permutations: int, random_state: int = 42) -> dict:
    """WilcoxonComparator: pairs swapped at random, scipy's two-sided statistic min(T+, T−) per permutation."""
    x, y = np.array(x), np.array(y)
    if np.array_equal(x, y) or np.all(x - y == 0):
        return {"score": 0.0, "pvalue": 1.0}
    rng = np.random.RandomState(random_state)
    observed = wilcoxon(x, y, alternative="two-sided").statistic
    combined = np.vstack((x, y)).T
    permuted = np.zeros(permutations)
    for index in range(permutations):
        pairs = combined.copy()
        swap = rng.choice([True, False], size=len(pairs))
        if swap.any():
            pairs[swap, 0], pairs[swap, 1] = pairs[swap, 1], pairs[swap, 0]
        permuted[index] = wilcoxon(pairs[:, 0], pairs[:, 1], alternative="two-sided").statistic
    centre = np.mean(permuted)
    return {
        "score": observed,
        "pvalue": float(np.mean(np.abs(permuted - centre) >= np.abs(observed - centre))),
    }


def rerun_random_graph(graphs: list) -> list:
    """RandomGraph(): edge_index.size(1) ordered pairs by torch.randint, self-loops' targets redrawn, directed."""
    import torch

    generator = torch.Generator().manual_seed(torch.initial_seed())
    result = []
    for data in graphs:
        data = data.clone()
        n, count = data.num_nodes, data.edge_index.size(1)
        row = torch.randint(0, n, (count,), generator=generator)
        col = torch.randint(0, n, (count,), generator=generator)
        loops = row == col
        while loops.any():
            col[loops] = torch.randint(0, n, (int(loops.sum()),), generator=generator)
            loops = row == col
        data.edge_index, data.edge_attr = torch.stack([row, col]), None
        result.append(data)
    return result
