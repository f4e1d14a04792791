"""The RINGS perturbation modes: names, which mode each changes, what it does (no implementations).

`stages.methods.graphs.perturbations` registers one transform per name here; configs and verdicts read only
this table, so they do not depend on the transforms' code.
"""

from __future__ import annotations

from typing import Literal

Changes = Literal["none", "features", "structure"]

MODES: dict[str, tuple[Changes, str]] = {
    "original": ("none", "the dataset as given"),
    "empty_features": ("features", "every node's features replaced by a single 0"),
    "complete_features": ("features", "one-hot node ids: every node distinguishable, nothing shared"),
    "random_features": ("features", "i.i.d. N(0, 1) features of the original width"),
    "shuffled_features": ("features", "feature rows permuted among the graph's nodes"),
    "geometric_features": ("features", "classical MDS coordinates of hop distances, per component"),
    "spectral_features": (
        "features",
        "Laplacian eigenmaps (the smoothest non-constant solutions of L v = λ D v), per component",
    ),
    "empty_graph": ("structure", "all edges removed"),
    "complete_graph": ("structure", "every pair of nodes joined"),
    "random_graph": ("structure", "G(n, m): as many edges as the original, placed uniformly"),
    "random_connected_graph": ("structure", "a random recursive tree plus uniform edges up to max(m, n − 1)"),
}
"""name → (the mode it changes, description)."""

DEFAULT_MODES = (
    "original",
    "empty_features",
    "complete_features",
    "random_features",
    "empty_graph",
    "complete_graph",
    "random_graph",
    "random_connected_graph",
)
