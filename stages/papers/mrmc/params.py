"""The `mrmc:` section of params.yaml.

`scale: full` replaces the CPU-scale sizes by the paper-scale grid in `FULL_SCALE` (same code, same stages):
`dvc exp run -S mrmc.scale=full`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from stages.core.params import StrictModel
from stages.methods.selection.registry import SELECTORS
from stages.models.config import TrainConfig
from stages.papers.fields import PoolParams, check_choices

FULL_SCALE: dict[str, Any] = {
    "pool_size": None,
    "test_size": None,
    "seeds": [0, 1, 2, 3, 4],
    "trace": {"epochs": 20, "channels": (32, 64), "hidden": (128,)},
    "train": {"epochs": 60, "channels": (32, 64), "hidden": (128,)},
}
"""What `scale: full` sets over the section: the whole 60k/10k splits, 5 seeds, a wider CNN, 60 training epochs."""


class MethodParams(StrictModel):
    """One compared method: a registered selector and its options."""

    selector: str
    options: dict[str, Any] = Field(default_factory=dict)
    budgets: list[float] | None = Field(
        None, description="the budgets this method runs at (a subset of mrmc.budgets); null: all of them"
    )


class CostParams(StrictModel):
    """The `mrmc-cost` benchmark: interleaved repeats of one epoch of each kind and of each scoring call."""

    repeats: int = Field(5, ge=1, description="timed repeats per call (after one warm-up), interleaved")
    paper_trace_epochs: int = Field(20, ge=1, description="the paper's trace length R")
    paper_train_epochs: int = Field(200, ge=1, description="the paper's core-set training epochs (DeepCore)")

    @property
    def epoch_ratio(self) -> float:
        """Training epochs per trace epoch in the paper (200 / 20 = 10)."""
        return self.paper_train_epochs / self.paper_trace_epochs


class ClaimsParams(StrictModel):
    """Thresholds the claims stage uses (fixed before any run, never fitted to results)."""

    mrmc_method: str = "mrmc"
    random_method: str = "random"
    baselines: list[str] = Field(default_factory=lambda: ["herding", "kcenter", "el2n", "forgetting"])
    score_baselines: list[str] = Field(default_factory=lambda: ["el2n", "forgetting"], min_length=1)
    pure_method: str = "mrmc_pure"
    quota_method: str = "mrmc_class_quota"
    paper_budgets: list[float] = Field(
        default_factory=lambda: [0.3, 0.5, 0.7], min_length=1, description="the paper's budgets"
    )
    selection_overhead_ratio: float = Field(
        1.5, gt=0, description="MRMC's selection / training the same model for the same R epochs, below it"
    )
    total_cost_ratio: float = Field(
        1.0, gt=0, description="(selection + core-set training) / full training at the paper's epoch ratio"
    )
    cost_budget: float = Field(0.3, gt=0, le=1)
    uneven_ratio: float = Field(1.5, gt=1, description="max/min class count above which a core-set is uneven")
    confidence: float = Field(0.95, gt=0, lt=1, description="level of the t intervals over seeds")


class MRMCParams(PoolParams):
    """Everything the MRMC pipeline reads."""

    scale: Literal["default", "full"] = "default"
    budgets: list[Annotated[float, Field(gt=0, lt=1)]] = Field(
        default_factory=lambda: [0.1, 0.3, 0.5, 0.7],
        min_length=1,
        json_schema_extra={
            "uniqueItems": True
        },  # distinct: checked below too, and stated in the form's schema
        description="fractions of the pool each selector keeps: distinct, in (0, 1)",
    )
    balance: bool = Field(False, description="class quotas for every method that does not set its own")
    feature_space: Literal["embedding", "raw"] = "embedding"
    methods: dict[str, MethodParams]
    trace: TrainConfig = TrainConfig(epochs=20)
    train: TrainConfig = TrainConfig(epochs=15)
    cost: CostParams = CostParams()
    claims: ClaimsParams = ClaimsParams()

    @field_validator("budgets")
    @classmethod
    def _fractions(cls, budgets: list[float]) -> list[float]:
        if len(set(budgets)) != len(budgets):
            raise ValueError("budgets must be distinct")
        return sorted(budgets)

    def budgets_of(self, label: str) -> list[float]:
        """The budgets a method runs at: its own subset, or every one of `budgets`."""
        own = self.methods[label].budgets
        return self.budgets if own is None else sorted(own)

    def options_of(self, label: str) -> dict[str, Any]:
        """A method's selector options with the section's `balance` filled in unless the method sets it."""
        return {"balance": self.balance, **self.methods[label].options}

    @property
    def compared(self) -> list[str]:
        """The methods of the main comparison (they all take the section's `balance`)."""
        claims = self.claims
        return [claims.mrmc_method, claims.random_method, *claims.baselines, *claims.score_baselines]

    @model_validator(mode="after")
    def _methods_build(self) -> MRMCParams:
        check_choices(self.methods, SELECTORS, "selector", "mrmc.methods")
        if "full" in self.methods:
            raise ValueError("'full' is reserved for the full-data reference run")
        claims = self.claims
        named = [*self.compared, claims.pure_method, claims.quota_method]
        missing = sorted({label for label in named if label not in self.methods})
        if missing:
            raise ValueError(f"claims name methods that are not in mrmc.methods: {', '.join(missing)}")
        own_balance = sorted({label for label in self.compared if "balance" in self.methods[label].options})
        if own_balance:
            raise ValueError(
                f"mrmc.methods: {', '.join(own_balance)} set their own balance; the compared methods take "
                "mrmc.balance, so every one gets the same setting"
            )
        self._check_method_budgets()
        if claims.cost_budget not in self.budgets:
            raise ValueError(f"claims.cost_budget {claims.cost_budget} is not one of mrmc.budgets")
        return self._scaled()._check_trace_length()

    def _check_method_budgets(self) -> None:
        """A method's own budgets lie in `budgets`; compared methods run at all; the ablations where claimed."""
        for label, method in self.methods.items():
            outside = sorted(set(method.budgets or []) - set(self.budgets))
            if outside:
                raise ValueError(f"mrmc.methods.{label}.budgets: {outside} are not in mrmc.budgets")
            if label in self.compared and method.budgets is not None:
                raise ValueError(f"mrmc.methods.{label}.budgets: a compared method runs at every budget")
        claims = self.claims
        needed = {claims.quota_method: [min(self.budgets)], claims.pure_method: self.budgets}
        for label, budgets in needed.items():
            missing = sorted(set(budgets) - set(self.budgets_of(label)))
            if missing:
                raise ValueError(f"mrmc.methods.{label}.budgets leaves out {missing}, which the claims need")

    @property
    def judged_budgets(self) -> list[float]:
        """The paper's budgets this run has (the paper's claims are judged there; the cost budget is one)."""
        return [budget for budget in self.budgets if budget in self.claims.paper_budgets]

    def _check_trace_length(self) -> MRMCParams:
        """Every selector gets the traced epochs it needs (MRMC fits a loss decay: ≥ 2), before any training."""
        short = [
            f"{label} ({method.selector}: ≥ {SELECTORS.get(method.selector).min_trace_epochs})"
            for label, method in self.methods.items()
            if self.trace.epochs < SELECTORS.get(method.selector).min_trace_epochs
        ]
        if short:
            raise ValueError(
                f"mrmc.trace.epochs {self.trace.epochs} is too few for the traced epochs these methods need: "
                f"{', '.join(short)}"
            )
        return self

    def _scaled(self) -> MRMCParams:
        """This section with `FULL_SCALE` applied when `scale` is `full` (unchanged otherwise)."""
        if self.scale != "full":
            return self
        update = {
            key: getattr(self, key).model_copy(update=value) if isinstance(value, dict) else value
            for key, value in FULL_SCALE.items()
        }
        return self.model_copy(update=update)
