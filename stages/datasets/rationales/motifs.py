"""Barabási–Albert base graphs with a house (label 1) or a 5-cycle (label 0) motif attached: the motif's edges
are the gold rationale. Node features are constant, so only the structure carries the label."""

from __future__ import annotations

import networkx as nx
import numpy as np
from pydantic import Field

from stages.core.params import StrictModel

HOUSE = ((0, 1), (1, 2), (2, 3), (3, 0), (0, 4), (1, 4))  # a square with a roof: 5 nodes, 6 edges
CYCLE = ((0, 1), (1, 2), (2, 3), (3, 4), (4, 0))  # 5 nodes, 5 edges
SPLITS = ("train", "dev", "test")


class MotifParams(StrictModel):
    """Sizes of the motif graph set."""

    n_train: int = Field(700, ge=2)
    n_dev: int = Field(150, ge=2)
    n_test: int = Field(150, ge=2)
    base_nodes: int = Field(20, ge=3, description="nodes of the Barabási–Albert base")
    base_edges: int = Field(1, ge=1, description="edges each new BA node attaches with")


def motif_graph(
    label: int, params: MotifParams, rng: np.random.Generator
) -> tuple[int, np.ndarray, np.ndarray]:
    """(nodes, undirected edges [E, 2] with source < target, 0/1 gold per edge) of one graph."""
    base = nx.barabasi_albert_graph(params.base_nodes, params.base_edges, seed=int(rng.integers(2**31)))
    motif = HOUSE if label == 1 else CYCLE
    offset = params.base_nodes
    pairs = [(u, v, 0) for u, v in base.edges()]
    pairs += [(u + offset, v + offset, 1) for u, v in motif]
    pairs.append(
        (int(rng.integers(params.base_nodes)), offset + int(rng.integers(5)), 0)
    )  # the attaching edge
    edges = np.array([(min(u, v), max(u, v)) for u, v, _ in pairs], dtype=np.int64)
    gold = np.array([flag for _, _, flag in pairs], dtype=np.int8)
    order = np.lexsort((edges[:, 1], edges[:, 0]))
    return offset + 5, edges[order], gold[order]


def generate_motif_graphs(params: MotifParams, seed: int) -> list[dict]:
    """Balanced graph set: one dict per graph (`graph_id`, `split`, `label`, `nodes`, `edges`, `gold`)."""
    rng = np.random.default_rng(seed)
    graphs = []
    sizes = dict(zip(SPLITS, (params.n_train, params.n_dev, params.n_test), strict=True))
    for split, n in sizes.items():
        for label in rng.permutation(np.arange(n) % 2):
            nodes, edges, gold = motif_graph(int(label), params, rng)
            graphs.append(
                {
                    "graph_id": len(graphs),
                    "split": split,
                    "label": int(label),
                    "nodes": nodes,
                    "edges": edges,
                    "gold": gold,
                }
            )
    return graphs
