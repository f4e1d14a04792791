"""`feature_control`: same-density random graphs whose label lives in the node features only."""

from __future__ import annotations

from pydantic import Field

from stages.datasets.graphs.controls import ControlParams, feature_control
from stages.datasets.source import GRAPHS, Source


class FeatureControlParams(ControlParams):
    """Size of the control set and the seed of its generator."""

    seed: int = Field(0, ge=0, description="generator seed")


SOURCE = Source(
    "feature_control",
    GRAPHS,
    FeatureControlParams,
    lambda params: (
        feature_control(params, params.seed),
        {"generator": "feature_control", "seed": params.seed},
    ),
    "feature-only control: same-density G(n, m) graphs, class-shifted N(0, 1) node features (networkx)",
)
