"""The `info_coevolution:` section of params.yaml.

`scale: full` replaces the CPU-scale sizes by the paper-scale grid in `FULL_SCALE` (same code, same stages):
`dvc exp run -S info_coevolution.scale=full`.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field, model_validator

from stages.core.errors import PipelineError
from stages.core.params import StrictModel
from stages.methods.selection.coreset import budget_count
from stages.methods.selection.online.loop import RoundTraining, Schedule, TrainingMode
from stages.methods.selection.online.registry import STRATEGIES
from stages.models.config import TrainConfig
from stages.models.fixmatch_config import FixMatchConfig
from stages.papers.fields import PoolParams, Seeds, check_choices

QUANTILE_RADII = {"vote_radius_quantile": 0.5, "rescore_radius_quantile": 0.5}
FULL_SCALE: dict[str, Any] = {
    "pool_size": 20000,
    "test_size": None,
    "calibration_size": 2000,
    "seeds": [0, 1, 2, 3, 4],
    "reference_seeds": [0, 1, 2, 3, 4],
    "seed_fraction": 0.025,
    "round_fraction": 0.05,
    "batch_size": 100,
    "min_steps": 1000,
    "train": {"epochs": 10, "channels": [32, 64], "hidden": [128]},
    "fixmatch": {"steps": 2000, "mu": 7, "batch_size": 64, "ema_decay": 0.995},
    "strategies": {  # the rest of the 2 × 2 of the paper's two ideas, and FixMatch without the selection
        "info_coevolution_fixmatch": {
            "strategy": "info_coevolution",
            "options": QUANTILE_RADII,
            "training": "fixmatch",
        },
        "semi_selection_supervised": {"strategy": "info_coevolution_semi", "options": QUANTILE_RADII},
        "random_fixmatch": {"strategy": "random", "training": "fixmatch"},
    },
    "claims": {"reported": ["info_coevolution_fixmatch", "semi_selection_supervised", "random_fixmatch"]},
}
"""What `scale: full` sets: the 20k pool of the earlier MLP runs, 5 seeds, a wider CNN, FixMatch at μ = 7 for
2,000 steps a round, and the run kinds reported beside the claims (the rest of the 2 × 2)."""


def _merged(base: dict[str, Any], preset: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in preset.items():
        nested = isinstance(value, dict) and isinstance(merged.get(key), dict)
        merged[key] = _merged(merged[key], value) if nested else value
    return merged


class StrategyParams(StrictModel):
    """One compared run kind: a registered online-annotation strategy, its options, and how each round trains
    (`supervised` on the annotations, or `fixmatch`: the supervised teacher continued with FixMatch)."""

    strategy: str
    options: dict[str, Any] = Field(default_factory=dict)
    training: TrainingMode = "supervised"
    budget: float | None = Field(
        None, gt=0, description="this run kind's cap (share ≤ 1 or a count); null: info_coevolution.budget"
    )


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
    reported: list[str] = Field(
        default_factory=list, description="further run kinds reported beside the claims (the 2 × 2 grid)"
    )


class InfoCoevolutionParams(PoolParams):
    """Everything the Info-Coevolution pipeline reads."""

    scale: Literal["default", "full"] = "default"
    calibration_size: int = Field(
        500, ge=10, description="labelled train rows outside the pool the temperature is fitted on"
    )
    reference_seeds: Seeds = Field(
        default_factory=lambda: [0, 1, 2], min_length=3, description="full-label runs averaged (at least 3)"
    )
    seed_fraction: float = Field(0.025, gt=0, lt=1, description="random labelled seed set, share of the pool")
    round_fraction: float = Field(0.05, gt=0, le=1, description="annotations per round, share of the pool")
    batch_size: int = Field(100, ge=1, description="annotations per batch inside a round")
    budget: float = Field(
        1.0, gt=0, description="annotation cap: a share of the pool (≤ 1) or a number of annotations (> 1)"
    )
    min_steps: int = Field(300, ge=0, description="gradient steps at least per training")
    workers: int = Field(
        2,
        ge=1,
        description="processes for the annotation runs, one torch thread each (outputs do not depend on it)",
    )
    strategies: dict[str, StrategyParams]
    train: TrainConfig = TrainConfig(epochs=10)
    fixmatch: FixMatchConfig = FixMatchConfig()
    claims: ClaimsParams = ClaimsParams()

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray, **kwargs: Any) -> InfoCoevolutionParams:
        """Validate a section as params files give it, `scale: full` first merged with `FULL_SCALE`.

        (The preset is applied here rather than in a `before` validator, which would drop the strict JSON
        mode's list → tuple rule for the nested train config.)
        """
        raw = json.loads(json_data)
        if isinstance(raw, dict) and raw.get("scale") == "full":
            json_data = json.dumps(_merged(raw, FULL_SCALE))
        return super().model_validate_json(json_data, **kwargs)

    def training_of(self, label: str) -> RoundTraining:
        """How the run kind `label` trains each round."""
        return RoundTraining(mode=self.strategies[label].training, fixmatch=self.fixmatch)

    @model_validator(mode="after")
    def _strategies_build(self) -> InfoCoevolutionParams:
        check_choices(self.strategies, STRATEGIES, "strategy", "info_coevolution.strategies")
        named = [self.claims.info_coevolution, self.claims.semi_supervised, *self.claims.baselines]
        named += self.claims.reported
        missing = [label for label in named if label not in self.strategies]
        if missing:
            raise ValueError(f"claims name strategies that are not in info_coevolution.strategies: {missing}")
        for label in (None, *self.strategies):
            budget = self.budget_of(label)
            if budget <= 1 and self.seed_fraction >= budget:
                raise ValueError(f"seed_fraction {self.seed_fraction} must be below the budget {budget}")
        return self

    def budget_of(self, label: str | None = None) -> float:
        """The cap of run kind `label` (its own `budget`, else `info_coevolution.budget`)."""
        own = None if label is None else self.strategies[label].budget
        return self.budget if own is None else own

    def schedule(self, pool_size: int, label: str | None = None) -> Schedule:
        """The annotation counts of run kind `label` (default: the common budget) for a pool of `pool_size`
        rows (a budget above the pool size is an error)."""
        share = self.budget_of(label)
        key = "info_coevolution.budget" if label is None else f"info_coevolution.strategies.{label}.budget"
        if share > 1 and share != int(share):
            raise PipelineError(f"{key} {share}: a count above 1 must be a whole number")
        budget = budget_count(share, pool_size) if share <= 1 else int(share)
        if budget > pool_size:
            raise PipelineError(
                f"{key} {budget} exceeds the pool size {pool_size}; lower the budget or raise "
                "info_coevolution.pool_size"
            )
        return Schedule(
            seed_size=budget_count(self.seed_fraction, pool_size),
            round_size=budget_count(self.round_fraction, pool_size),
            batch_size=self.batch_size,
            budget=budget,
            min_steps=self.min_steps,
        )
