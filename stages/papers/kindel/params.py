"""The `kindel:` section of params.yaml."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from stages.core.params import StrictModel
from stages.methods.del_screens.baselines import REGRESSORS
from stages.methods.del_screens.config import ComposeOptions, SimulationOptions
from stages.papers.fields import check_choices


class RegressorParams(StrictModel):
    """A registered fingerprint regressor and its options."""

    model: str
    options: dict[str, Any] = Field(default_factory=dict)


class Grid(StrictModel):
    """What one scale runs."""

    per_cycle: int = Field(12, ge=2, description="simulated building blocks per cycle (library = per_cycle³)")
    splits: int = Field(3, ge=1, le=5, description="split columns used per kind (split1..splitN)")
    baselines: list[str] | None = Field(None, description="baseline labels run (None: all)")
    compose: list[str] = Field(
        default_factory=lambda: ["compose_full", "compose_factorized"], description="Compose labels run"
    )
    dnn_epochs: int = Field(10, ge=1, description="DNN epochs at this scale (the paper: 30)")
    dnn_patience: int = Field(3, ge=1, description="DNN early-stopping patience (the paper: 5)")


class ClaimsParams(StrictModel):
    """Thresholds fixed before any run."""

    disynthon_models: list[str] = Field(default_factory=lambda: ["rf", "xgboost"], min_length=1)
    on_dna_best: str = Field("rf", description="the model v1 reviews call best on-DNA")
    off_dna_best: str = Field("compose_full", description="the model v1 reviews call best off-DNA")
    offset_r: float = Field(
        0.9, gt=-1, lt=1, description="planted vs learned replicate offsets: r above this"
    )
    affinity_rho: float = Field(0.0, ge=-1, lt=1, description="Compose score vs true affinity: ρ above this")
    confidence: float = Field(0.95, gt=0, lt=1)


class KinDELParams(StrictModel):
    """Everything the KinDEL pipeline reads."""

    scale: Literal["default", "full"] = "default"
    default: Grid = Grid()
    full: Grid = Grid(
        per_cycle=30, splits=5, compose=["compose_full", "compose_factorized"], dnn_epochs=30, dnn_patience=5
    )
    source: Literal["simulated", "folder"] = Field(
        "simulated", description="simulate, or read real KinDEL files"
    )
    folder: str | None = Field(None, description="a KinDEL folder (source: folder)")
    target: str = Field("sim", pattern=r"^[A-Za-z0-9_-]+$", description="file prefix: ddr1, mapk14, or sim")
    max_rows: int | None = Field(None, ge=10, description="library rows drawn from a real folder (None: all)")
    simulation: SimulationOptions = SimulationOptions()
    baseline_radius: int = Field(2, ge=1, description="Morgan radius of the baselines (the paper: 2)")
    baseline_bits: int = Field(2048, ge=64)
    baselines: dict[str, RegressorParams] = Field(min_length=1)
    compose: dict[str, ComposeOptions] = Field(min_length=1)
    claims: ClaimsParams = ClaimsParams()

    @property
    def grid(self) -> Grid:
        """The grid of the chosen scale."""
        return self.full if self.scale == "full" else self.default

    @property
    def baseline_labels(self) -> list[str]:
        """The baseline labels run at the chosen scale."""
        return self.grid.baselines if self.grid.baselines is not None else list(self.baselines)

    @property
    def models(self) -> list[str]:
        """Every model label run at the chosen scale (baselines, then Compose)."""
        return [*self.baseline_labels, *self.grid.compose]

    @model_validator(mode="after")
    def _consistent(self) -> KinDELParams:
        check_choices(self.baselines, REGRESSORS, "model", "kindel.baselines")
        if self.source == "folder" and not self.folder:
            raise ValueError("source: folder needs kindel.folder (a KinDEL folder)")
        clash = sorted(set(self.baselines) & set(self.compose))
        if clash:
            raise ValueError(f"labels {clash} name both a baseline and a Compose model")
        for scale, grid in (("default", self.default), ("full", self.full)):
            unknown = [b for b in grid.baselines or [] if b not in self.baselines]
            unknown += [c for c in grid.compose if c not in self.compose]
            if unknown:
                raise ValueError(f"{scale}: unknown model labels {unknown}")
        named = [*self.claims.disynthon_models, self.claims.on_dna_best, self.claims.off_dna_best]
        absent = [label for label in named if label not in self.models]
        if absent:
            raise ValueError(f"claims name models not run at scale {self.scale}: {absent}")
        return self
