"""The `info_coevolution:` section of params.yaml."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from stages.core.errors import PipelineError
from stages.core.params import StrictModel
from stages.methods.selection.coreset import budget_count
from stages.methods.selection.online.loop import Schedule
from stages.methods.selection.online.registry import STRATEGIES
from stages.models.config import TrainConfig
from stages.papers.fields import PoolParams, check_choices


class StrategyParams(StrictModel):
    """One compared strategy: a registered online-annotation strategy and its options."""

    strategy: str
    options: dict[str, Any] = Field(default_factory=dict)


class ClaimsParams(StrictModel):
    """What the claims stage compares, and its thresholds (fixed before any run, never fitted to results)."""

    info_coevolution: str = "info_coevolution"
    semi_supervised: str = "info_coevolution_semi"
    baselines: list[str] = Field(default_factory=lambda: ["random", "least_confidence"], min_length=1)
    tolerance: float = Field(
        0.005, ge=0, description="accuracy gap to full-label that still counts as reached"
    )
    min_saving: float = Field(0.25, gt=0, lt=1, description="share of the pool Info-Coevolution must save")
    confidence: float = Field(0.95, gt=0, lt=1, description="level of the t intervals over seeds")


class InfoCoevolutionParams(PoolParams):
    """Everything the Info-Coevolution pipeline reads."""

    seed_fraction: float = Field(0.025, gt=0, lt=1, description="random labelled seed set, share of the pool")
    round_fraction: float = Field(0.05, gt=0, le=1, description="annotations per round, share of the pool")
    batch_size: int = Field(100, ge=1, description="annotations per batch inside a round")
    budget: float = Field(
        0.5, gt=0, description="annotation cap: a share of the pool (≤ 1) or a number of annotations (> 1)"
    )
    min_steps: int = Field(300, ge=0, description="gradient steps at least per training")
    strategies: dict[str, StrategyParams]
    train: TrainConfig = TrainConfig(epochs=10)
    claims: ClaimsParams = ClaimsParams()

    @model_validator(mode="after")
    def _strategies_build(self) -> InfoCoevolutionParams:
        check_choices(self.strategies, STRATEGIES, "strategy", "info_coevolution.strategies")
        named = [self.claims.info_coevolution, self.claims.semi_supervised, *self.claims.baselines]
        missing = [label for label in named if label not in self.strategies]
        if missing:
            raise ValueError(f"claims name strategies that are not in info_coevolution.strategies: {missing}")
        if self.budget <= 1 and self.seed_fraction >= self.budget:
            raise ValueError(f"seed_fraction {self.seed_fraction} must be below the budget {self.budget}")
        return self

    def schedule(self, pool_size: int) -> Schedule:
        """The annotation counts for a pool of `pool_size` rows (a budget above the pool size is an error)."""
        if self.budget > 1 and self.budget != int(self.budget):
            raise PipelineError(
                f"info_coevolution.budget {self.budget}: a count above 1 must be a whole number"
            )
        budget = budget_count(self.budget, pool_size) if self.budget <= 1 else int(self.budget)
        if budget > pool_size:
            raise PipelineError(
                f"info_coevolution.budget {budget} exceeds the pool size {pool_size}; lower the budget or "
                "raise info_coevolution.pool_size"
            )
        return Schedule(
            seed_size=budget_count(self.seed_fraction, pool_size),
            round_size=budget_count(self.round_fraction, pool_size),
            batch_size=self.batch_size,
            budget=budget,
            min_steps=self.min_steps,
        )
