"""The `mrmc:` section of params.yaml."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from stages.core.params import StrictModel
from stages.methods.selection.registry import SELECTORS
from stages.models.config import TrainConfig
from stages.papers.fields import PoolParams, check_choices


class MethodParams(StrictModel):
    """One compared method: a registered selector and its options."""

    selector: str
    options: dict[str, Any] = Field(default_factory=dict)


class ClaimsParams(StrictModel):
    """Thresholds the claims stage uses (fixed before any run, never fitted to results)."""

    mrmc_method: str = "mrmc"
    random_method: str = "random"
    unbalanced_method: str = "mrmc_unbalanced"
    score_baselines: list[str] = Field(default_factory=lambda: ["el2n", "forgetting"], min_length=1)
    selection_time_ratio: float = Field(1.5, gt=0)
    cost_budget: float = Field(0.3, gt=0, le=1)
    uneven_ratio: float = Field(1.5, gt=1, description="max/min class count above which a core-set is uneven")
    confidence: float = Field(0.95, gt=0, lt=1, description="level of the t intervals over seeds")


class MRMCParams(PoolParams):
    """Everything the MRMC pipeline reads."""

    budgets: list[float] = Field(default_factory=lambda: [0.1, 0.3, 0.5], min_length=1)
    feature_space: Literal["embedding", "raw"] = "embedding"
    methods: dict[str, MethodParams]
    trace: TrainConfig = TrainConfig(epochs=10)
    train: TrainConfig = TrainConfig(epochs=15)
    claims: ClaimsParams = ClaimsParams()

    @field_validator("budgets")
    @classmethod
    def _fractions(cls, budgets: list[float]) -> list[float]:
        if any(not 0 < budget < 1 for budget in budgets) or len(set(budgets)) != len(budgets):
            raise ValueError("budgets must be distinct fractions in (0, 1)")
        return sorted(budgets)

    @model_validator(mode="after")
    def _methods_build(self) -> MRMCParams:
        check_choices(self.methods, SELECTORS, "selector", "mrmc.methods")
        if "full" in self.methods:
            raise ValueError("'full' is reserved for the full-data reference run")
        claims = self.claims
        named = [claims.mrmc_method, claims.random_method, claims.unbalanced_method, *claims.score_baselines]
        missing = [label for label in named if label not in self.methods]
        if missing:
            raise ValueError(f"claims name methods that are not in mrmc.methods: {', '.join(missing)}")
        if self.claims.cost_budget not in self.budgets:
            raise ValueError(f"claims.cost_budget {self.claims.cost_budget} is not one of the budgets")
        return self
