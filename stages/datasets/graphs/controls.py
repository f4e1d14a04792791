"""Synthetic control datasets (networkx) whose label depends on one mode only, so the right audit is known.

- `structure_control`: class 0 = Erdős–Rényi G(n, m), class 1 = Barabási–Albert(n, 2) with the same n and the
  same number of edges m = 2(n − 2); every node has the constant feature 1 (or, with
  `structure_features: noise`, i.i.d. N(0, 1) noise a model can overfit). Only structure carries the label.
- `feature_control`: both classes are G(n, m) random graphs of the same density; node features are N(0, 1)
  with the first `informative` dimensions shifted by `shift` in class 1. Only features carry the label.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import Field, model_validator

from stages.core.params import StrictModel
from stages.core.seeding import derive_seed
from stages.datasets.graphs.table import GraphTables, build_tables

if TYPE_CHECKING:  # networkx (0.13 s) loads when a control set is built, not when its params are read
    import networkx as nx


class ControlParams(StrictModel):
    """Size of a control set and of its graphs."""

    graphs: int = Field(400, ge=10, description="graphs in the set (half per class)")
    min_nodes: int = Field(20, ge=5)
    max_nodes: int = Field(30, ge=5)
    feature_dim: int = Field(8, ge=1, description="width of the noise features")
    structure_features: Literal["constant", "noise"] = Field(
        "constant", description="structure_control node features: the constant 1, or label-free N(0, 1) noise"
    )
    informative: int = Field(2, ge=1, description="feature_control: shifted feature dimensions")
    shift: float = Field(1.0, gt=0, description="feature_control: class-1 mean shift of informative dims")
    seed: int = Field(0, ge=0, description="generator seed")

    @model_validator(mode="after")
    def _sizes(self) -> ControlParams:
        if self.max_nodes < self.min_nodes:
            raise ValueError("max_nodes must be ≥ min_nodes")
        if self.informative > self.feature_dim:
            raise ValueError("informative must be ≤ feature_dim")
        return self


def _edges(graph: nx.Graph) -> np.ndarray:
    return np.asarray(list(graph.edges()), dtype=np.int64).reshape(-1, 2)


def _sizes_and_labels(params: ControlParams, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    labels = np.arange(params.graphs) % 2
    sizes = rng.integers(params.min_nodes, params.max_nodes + 1, size=params.graphs)
    return sizes, labels


def structure_control(params: ControlParams, seed: int) -> GraphTables:
    """BA vs ER graphs with equal node and edge counts, noise features: the label lives in the structure."""
    import networkx as nx

    rng = np.random.default_rng(derive_seed(seed, "structure_control"))
    sizes, labels = _sizes_and_labels(params, rng)
    features, edges = [], []
    for index, (n, label) in enumerate(zip(sizes, labels, strict=True)):
        graph_seed = derive_seed(seed, "structure_control", index)
        n_edges = 2 * (int(n) - 2)
        graph = (
            nx.barabasi_albert_graph(int(n), 2, seed=graph_seed)
            if label
            else nx.gnm_random_graph(int(n), n_edges, seed=graph_seed)
        )
        noise = rng.standard_normal((int(n), params.feature_dim)).astype(np.float32)
        features.append(noise if params.structure_features == "noise" else np.ones((int(n), 1), np.float32))
        edges.append(_edges(graph))
    return build_tables(labels, features, edges)


def feature_control(params: ControlParams, seed: int) -> GraphTables:
    """Random graphs of one density for both classes, class-shifted features: the label lives in the features."""
    import networkx as nx

    rng = np.random.default_rng(derive_seed(seed, "feature_control"))
    sizes, labels = _sizes_and_labels(params, rng)
    features, edges = [], []
    for index, (n, label) in enumerate(zip(sizes, labels, strict=True)):
        graph = nx.gnm_random_graph(
            int(n), 2 * (int(n) - 2), seed=derive_seed(seed, "feature_control", index)
        )
        x = rng.standard_normal((int(n), params.feature_dim)).astype(np.float32)
        x[:, : params.informative] += params.shift * label
        features.append(x)
        edges.append(_edges(graph))
    return build_tables(labels, features, edges)
