"""The `rings:` section of params.yaml."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from stages.core.params import StrictModel
from stages.datasets.graphs.controls import ControlParams
from stages.methods.graphs.audit import AuditConfig


class B3dbDataset(StrictModel):
    """B3DB blood–brain-barrier molecules from the `qc-b3db` package as RDKit graphs."""

    kind: Literal["b3db"]
    max_molecules: int | None = Field(1500, ge=20, description="label-stratified sample (None: all 7,807)")


class ControlDataset(ControlParams):
    """A networkx control set whose label depends on one mode only."""

    kind: Literal["structure_control", "feature_control"]


class TuDataset(StrictModel):
    """Your dataset in the TU format: `<path>/<name>_A.txt`, `_graph_indicator.txt`, `_graph_labels.txt`, ..."""

    kind: Literal["tu"]
    path: str
    name: str


class GraphTableDataset(StrictModel):
    """Your dataset as a graph-table folder (graphs/nodes/edges .parquet)."""

    kind: Literal["graph_table"]
    path: str


DatasetSpec = Annotated[
    B3dbDataset | ControlDataset | TuDataset | GraphTableDataset, Field(discriminator="kind")
]


class ClaimsParams(StrictModel):
    """Which datasets the claims read."""

    structure_control: str = "structure_control"
    feature_control: str = "feature_control"


class RingsParams(StrictModel):
    """Everything the RINGS pipeline reads."""

    datasets: dict[str, DatasetSpec] = Field(min_length=1)
    audit: AuditConfig = AuditConfig()
    claims: ClaimsParams = ClaimsParams()

    @field_validator("datasets")
    @classmethod
    def _names(cls, datasets: dict[str, DatasetSpec]) -> dict[str, DatasetSpec]:
        bad = [name for name in datasets if not name.replace("_", "").isalnum() or not name.islower()]
        if bad:
            raise ValueError(f"dataset names must be lower-case letters, digits and '_': {bad}")
        return datasets

    @model_validator(mode="after")
    def _claims_datasets(self) -> RingsParams:
        for role in ("structure_control", "feature_control"):
            name = getattr(self.claims, role)
            if name not in self.datasets or self.datasets[name].kind != role:
                raise ValueError(f"claims.{role} '{name}' must name a dataset of kind {role}")
        for mode in ("empty_graph", "empty_features"):
            if mode not in self.audit.modes:
                raise ValueError(f"audit.modes must include {mode}: the claims compare the original with it")
        for mode in ("random_features", "geometric_features"):
            if mode not in self.audit.complementarity_modes:
                raise ValueError(
                    f"audit.complementarity_modes must include {mode} for the complementarity claim"
                )
        return self
