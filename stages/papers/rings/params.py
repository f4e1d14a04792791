"""The `rings:` section of params.yaml."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from stages.core.params import StrictModel
from stages.datasets.registry import names_of
from stages.methods.graphs.config import AuditConfig


class ClaimsParams(StrictModel):
    """Which datasets the claims read."""

    structure_control: str = "structure_control"
    feature_control: str = "feature_control"
    confidence: float = Field(0.95, gt=0, lt=1, description="level of the Welch t intervals over graphs")


class RingsParams(StrictModel):
    """Everything the RINGS pipeline reads."""

    datasets: list[str] = Field(
        min_length=1, description="graph sources to audit (their data-<name> stages; see common.datasets)"
    )
    audit: AuditConfig = AuditConfig()
    claims: ClaimsParams = ClaimsParams()

    @field_validator("datasets")
    @classmethod
    def _graph_sources(cls, datasets: list[str]) -> list[str]:
        graph_sources = names_of("graphs")
        unknown = [name for name in datasets if name not in graph_sources]
        if unknown:
            raise ValueError(f"not graph sources: {unknown}; graph sources: {', '.join(graph_sources)}")
        if len(set(datasets)) != len(datasets):
            raise ValueError("each dataset may be listed once")
        return datasets

    @model_validator(mode="after")
    def _claims_datasets(self) -> RingsParams:
        for role in ("structure_control", "feature_control"):
            name = getattr(self.claims, role)
            if name not in self.datasets:
                raise ValueError(f"claims.{role} '{name}' must be one of the audited datasets")
        for mode in ("empty_graph", "empty_features"):
            if mode not in self.audit.modes:
                raise ValueError(f"audit.modes must include {mode}: the claims compare the original with it")
        for mode in ("random_features", "geometric_features"):
            if mode not in self.audit.complementarity_modes:
                raise ValueError(
                    f"audit.complementarity_modes must include {mode} for the complementarity claim"
                )
        return self
