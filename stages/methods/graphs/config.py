"""The configs of a RINGS audit: plain params models, importable without torch, scipy or the transforms.

Params sections (`rings.audit`, `icml25 audit-graphs -S`) validate against these, so a stage that only reads
the config does not depend on the training, testing or geometry code.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from stages.core.params import StrictModel
from stages.methods.graphs.modes import DEFAULT_MODES, MODES
from stages.models.config import GnnConfig, TrainConfig


class SeparabilityConfig(StrictModel):
    """How mode pairs are compared."""

    permutations: int = Field(
        10_000,
        ge=100,
        description=(
            "B random permutations per test, p = (1 + k) / (1 + B); a test with at most max(B, 65,536) distinct "
            "arrangements enumerates them all instead (exact p)"
        ),
    )
    alpha: float = Field(0.01, gt=0, lt=1)
    pairs: Literal["all", "against_original"] = Field(
        "all",
        description=(
            "every pair of modes, Bonferroni over all of them (the paper and the official code), or only the "
            "original vs each perturbation"
        ),
    )


GraphMetric = Literal["shortest_path", "resistance", "heat", "diffusion", "rings_heat", "rings_diffusion"]


class GraphMetricConfig(StrictModel):
    """Which distance between the nodes of a graph the complementarity compares the features with."""

    metric: GraphMetric = Field(
        "shortest_path",
        description=(
            "heat / diffusion: the textbook heat-kernel and random-walk diffusion distances; rings_heat / "
            "rings_diffusion: the official aidos-lab/rings definitions (normalised Laplacian spectrum)"
        ),
    )
    heat_time: float = Field(1.0, gt=0, description="t of heat (exp(−tL)) and rings_heat (exp(−tλ))")
    diffusion_steps: int = Field(
        2, ge=1, description="s: random-walk steps of diffusion, the power λ^s of rings_diffusion"
    )
    edgeless: Literal["whole_graph", "components"] = Field(
        "whole_graph",
        description=(
            "a graph without edges: whole_graph lifts it as one space with D_G = 0 (the official code), "
            "components scores each isolated node 0"
        ),
    )


COMPLEMENTARITY_MODES = ("original", "random_features", "geometric_features", "spectral_features")
EXTRA_GRAPH_METRICS = ("rings_heat", "rings_diffusion")


class AuditConfig(StrictModel):
    """Everything an audit run reads."""

    modes: list[str] = Field(default_factory=lambda: list(DEFAULT_MODES), min_length=2)
    seeds: list[int] = Field(
        default_factory=lambda: list(range(14)),
        min_length=2,
        description="runs per mode; pairs for the tests",
    )
    test_fraction: float = Field(0.2, gt=0, lt=1)
    metric: Literal["auroc", "accuracy"] = "auroc"
    gnn: GnnConfig = GnnConfig()
    baseline: TrainConfig = TrainConfig(epochs=50, batch_size=64, learning_rate=1e-3, hidden=(64,))
    separability: SeparabilityConfig = SeparabilityConfig()
    complementarity_modes: list[str] = Field(
        default_factory=lambda: list(COMPLEMENTARITY_MODES), min_length=1
    )
    geometric_dim: int = Field(
        4,
        ge=1,
        description="width of geometric_features (MDS of hop distances) and spectral_features (Laplacian eigenmaps)",
    )
    random_graph_semantics: Literal["paper", "official"] = Field(
        "paper",
        description=(
            "random_graph / random_connected_graph: paper = as many undirected edges as the graph has (m); "
            "official = edge_index.size(1) = 2m edges drawn and stored directed, as aidos-lab/rings does"
        ),
    )
    graph_metric: GraphMetricConfig = GraphMetricConfig()
    extra_graph_metrics: list[GraphMetric] = Field(
        default_factory=lambda: list(EXTRA_GRAPH_METRICS),
        description=(
            "further D_G the complementarity is measured with, besides graph_metric.metric (same heat_time, "
            "diffusion_steps and edgeless); the report's table uses graph_metric.metric"
        ),
    )

    @property
    def graph_metrics(self) -> list[GraphMetricConfig]:
        """Every D_G the complementarity is measured with: graph_metric first, then the extra ones."""
        names = dict.fromkeys([self.graph_metric.metric, *self.extra_graph_metrics])
        return [self.graph_metric.model_copy(update={"metric": name}) for name in names]

    workers: int = Field(2, ge=1, description="processes training runs in parallel")

    @field_validator("modes", "complementarity_modes")
    @classmethod
    def _known_modes(cls, modes: list[str]) -> list[str]:
        unknown = [mode for mode in modes if mode not in MODES]
        if unknown:
            raise ValueError(f"unknown modes {unknown}; valid names: {', '.join(sorted(MODES))}")
        if len(set(modes)) != len(modes):
            raise ValueError("modes must be distinct")
        return modes

    @field_validator("seeds")
    @classmethod
    def _distinct_seeds(cls, seeds: list[int]) -> list[int]:
        if len(set(seeds)) != len(seeds) or min(seeds) < 0:
            raise ValueError("seeds must be distinct non-negative integers")
        return seeds

    @field_validator("modes")
    @classmethod
    def _original_first(cls, modes: list[str]) -> list[str]:
        if modes[0] != "original":
            raise ValueError("the first mode must be 'original' (every perturbation is compared with it)")
        return modes
