"""`feature_control`: same-density random graphs whose label lives in the node features only."""

from __future__ import annotations

from stages.datasets.graphs.controls import ControlParams, feature_control
from stages.datasets.source import GRAPHS, Source


def load(params: ControlParams):
    """The generated graphs and their provenance (generator and seed)."""
    return feature_control(params, params.seed), {"generator": "feature_control", "seed": params.seed}


SOURCE = Source(
    "feature_control",
    GRAPHS,
    ControlParams,
    load,
    "feature-only control: same-density G(n, m) graphs, class-shifted N(0, 1) node features (networkx)",
)
