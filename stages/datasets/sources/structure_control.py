"""`structure_control`: networkx graphs whose label lives in the structure only (BA vs ER, same n and m)."""

from __future__ import annotations

from stages.datasets.graphs.controls import ControlParams, structure_control
from stages.datasets.source import GRAPHS, Source


def load(params: ControlParams):
    """The generated graphs and their provenance (generator and seed)."""
    return structure_control(params, params.seed), {"generator": "structure_control", "seed": params.seed}


SOURCE = Source(
    "structure_control",
    GRAPHS,
    ControlParams,
    load,
    "structure-only control: Barabási–Albert vs Erdős–Rényi graphs with equal n and m (networkx)",
)
