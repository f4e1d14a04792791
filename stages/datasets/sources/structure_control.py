"""`structure_control`: networkx graphs whose label lives in the structure only (BA vs ER, same n and m)."""

from __future__ import annotations

from pydantic import Field

from stages.datasets.graphs.controls import ControlParams, structure_control
from stages.datasets.source import GRAPHS, Source


class StructureControlParams(ControlParams):
    """Size of the control set and the seed of its generator."""

    seed: int = Field(0, ge=0, description="generator seed")


SOURCE = Source(
    "structure_control",
    GRAPHS,
    StructureControlParams,
    lambda params: (
        structure_control(params, params.seed),
        {"generator": "structure_control", "seed": params.seed},
    ),
    "structure-only control: Barabási–Albert vs Erdős–Rényi graphs with equal n and m (networkx)",
)
