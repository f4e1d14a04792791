"""The `rings:` section of params.yaml."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from stages.core.params import StrictModel
from stages.datasets.names import GraphSourceName
from stages.methods.graphs.config import AuditConfig


class ClaimsParams(StrictModel):
    """Which datasets the claims read."""

    structure_control: str = "structure_control"
    feature_control: str = "feature_control"
    confidence: float = Field(0.95, gt=0, lt=1, description="level of the paired t intervals over graphs")


class RingsParams(StrictModel):
    """Everything the RINGS pipeline reads."""

    datasets: list[GraphSourceName] = Field(
        min_length=1, description="graph sources to audit (their data-<name> stages; see common.datasets)"
    )
    audit: AuditConfig = AuditConfig()
    claims: ClaimsParams = ClaimsParams()

    @field_validator("datasets")
    @classmethod
    def _distinct(cls, datasets: list[str]) -> list[str]:
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
        modes = self.audit.complementarity_modes
        if "random_features" not in modes or not {"geometric_features", "spectral_features"} & set(modes):
            raise ValueError(
                "audit.complementarity_modes must include random_features and geometric_features or "
                "spectral_features for the complementarity claim"
            )
        return self
