"""The `llm_srbench:` section of params.yaml."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from stages.core.params import StrictModel
from stages.methods.equations.feynman import FORMULAS
from stages.methods.equations.searchers import build_searcher
from stages.methods.equations.synth import DOMAINS

BUDGETED = {"gplearn": "generations", "llmsr": "proposals", "pysr": "iterations"}
"""The option of each searcher that `budget` multiplies (data-blind keeps its five hypotheses)."""


class Scale(StrictModel):
    """Problem counts and sizes of one scale, and the one budget factor every searcher's search is scaled by."""

    formulas: list[str] | None = Field(None, description="Feynman formulas by name (null: all hand-entered)")
    max_transforms_per_formula: int = Field(2, ge=1, description="transformed forms kept per formula")
    n_train: int = Field(1000, ge=10)
    n_test: int = Field(500, ge=10)
    synth_per_domain: int = Field(4, ge=1, description="LSR-Synth-style problems per domain")
    synth_points: int = Field(
        1000, ge=50, description="evenly spaced points per synthetic problem (paper 5000)"
    )
    synth_train_fraction: float = Field(
        0.8, gt=0, lt=1, description="share of the in-domain rows used to train"
    )
    budget: float = Field(
        1.0, gt=0, description="factor on gplearn generations, LLM-SR proposals, PySR iterations"
    )

    @model_validator(mode="after")
    def _known(self) -> Scale:
        names = {formula.name for formula in FORMULAS}
        unknown = sorted(set(self.formulas or []) - names)
        if unknown:
            raise ValueError(f"unknown formulas {unknown}; hand-entered: {', '.join(sorted(names))}")
        return self


class SearcherParams(StrictModel):
    """A searcher and its options (constructor keywords of stages.methods.equations.searchers)."""

    searcher: str
    options: dict[str, Any] = Field(default_factory=dict)


class ClaimsParams(StrictModel):
    """Thresholds fixed before any run."""

    data_blind: str = "data_blind"
    data_driven: list[str] = Field(default_factory=lambda: ["gplearn", "llmsr"], min_length=1)
    oracle: str = "oracle"
    sa_ceiling: float = Field(
        0.75, gt=0, le=1, description="'far below 100 %': the Wilson upper bound of a searcher's SA share"
    )
    complexity_bins: int = Field(3, ge=1, description="equal-count bins of ground-truth node count (claim 3)")
    log_floor: float = Field(1e-12, gt=0, description="NMSE floor before log10 (NMSE 0 of an exact fit)")
    log_ceiling: float = Field(1e3, gt=0, description="NMSE cap before log10 (no usable prediction: inf)")
    confidence: float = Field(0.95, gt=0, lt=1)


class LLMSRBenchParams(StrictModel):
    """Everything the LLM-SRBench pipeline reads."""

    scale: Literal["default", "full"] = "default"
    default: Scale = Scale()
    full: Scale = Scale(max_transforms_per_formula=10, synth_per_domain=10, synth_points=5000, budget=20.0)
    searchers: dict[str, SearcherParams]
    tau: float = Field(0.1, gt=0, description="Acc_τ threshold on the max relative error")
    sa_rtol: float = Field(1e-4, gt=0, description="numeric-identity tolerance of the SA stand-in")
    sa_points: int = Field(256, ge=20, description="fresh points of the SA numeric identity")
    claims: ClaimsParams = ClaimsParams()

    @property
    def grid(self) -> Scale:
        """The scale in use."""
        return self.full if self.scale == "full" else self.default

    def searcher_options(self, label: str) -> dict[str, Any]:
        """A searcher's options with its budget option multiplied by the scale's factor."""
        entry = self.searchers[label]
        options = dict(entry.options)
        key = BUDGETED.get(entry.searcher)
        if key is not None and key in options:
            options[key] = max(1, round(options[key] * self.grid.budget))
        return options

    @model_validator(mode="after")
    def _known(self) -> LLMSRBenchParams:
        for label, entry in self.searchers.items():
            try:
                build_searcher(entry.searcher, entry.options)
            except ValueError as error:
                raise ValueError(f"searchers.{label}: {error}") from None
        named = [self.claims.data_blind, self.claims.oracle, *self.claims.data_driven]
        missing = sorted({label for label in named if label not in self.searchers})
        if missing:
            raise ValueError(
                f"claims name searchers that are not in llm_srbench.searchers: {', '.join(missing)}"
            )
        return self


DOMAIN_NAMES = tuple(DOMAINS)
