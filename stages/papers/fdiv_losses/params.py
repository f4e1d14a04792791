"""The `fdiv_losses:` section of params.yaml."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from stages.core.params import StrictModel
from stages.methods.losses.config import LossSpec
from stages.papers.fields import DatasetName, PoolParams

Reference = Literal["unit", "uniform"]


class ClassifyParams(StrictModel):
    """(b) digits: a linear model and an MLP trained with every loss, full-batch-free minibatch Adam."""

    models: list[Literal["linear", "mlp"]] = Field(default_factory=lambda: ["linear", "mlp"], min_length=1)
    hidden: int = Field(64, ge=1)
    epochs: int = Field(10, ge=1)
    batch_size: int = Field(64, ge=1)
    learning_rate: float = Field(0.01, gt=0)


class LMParams(StrictModel):
    """(c) the char-level causal transformer and its pretraining on Python stdlib sources."""

    corpus_modules: list[str] = Field(
        default_factory=lambda: ["argparse", "textwrap", "difflib", "fractions", "calendar", "shlex"],
        min_length=1,
        description="stdlib modules whose source files make the corpus (read from this Python, offline)",
    )
    held_out_fraction: float = Field(0.1, gt=0, lt=0.5)
    d_model: int = Field(64, ge=8)
    layers: int = Field(2, ge=1)
    heads: int = Field(4, ge=1)
    context: int = Field(64, ge=8)
    steps: int = Field(300, ge=1)
    batch_size: int = Field(16, ge=1)
    learning_rate: float = Field(3e-3, gt=0)
    log_every: int = Field(25, ge=1)
    eval_windows: int = Field(64, ge=1, description="held-out windows of `context` tokens scored")

    @model_validator(mode="after")
    def _heads_divide(self) -> LMParams:
        if self.d_model % self.heads:
            raise ValueError(f"lm.heads ({self.heads}) must divide lm.d_model ({self.d_model})")
        return self


class SFTParams(StrictModel):
    """(d) fine-tuning on `aa+bb=ccc` strings, loss on answer tokens only, greedy exact match."""

    max_operand: int = Field(49, ge=1, le=99)
    test_size: int = Field(300, ge=10)
    steps: int = Field(300, ge=1)
    batch_size: int = Field(32, ge=1)
    learning_rate: float = Field(2e-3, gt=0)


class DistilParams(StrictModel):
    """(e) a 1-layer student learns the CE teacher's next-token distributions through ℓ_f(θ_s, p_teacher)."""

    d_model: int = Field(32, ge=8)
    layers: int = Field(1, ge=1)
    heads: int = Field(4, ge=1)
    steps: int = Field(300, ge=1)
    batch_size: int = Field(16, ge=1)
    learning_rate: float = Field(3e-3, gt=0)


class ClaimsParams(StrictModel):
    """Thresholds fixed before any run (the card's)."""

    operator_tolerance: float = Field(1e-5, gt=0)
    simplex_tolerance: float = Field(1e-6, gt=0)
    accuracy_margin: float = Field(0.005, ge=0, description="α=1.5 accuracy ≥ CE − margin (0.5 pt)")
    exact_match_margin: float = Field(0.01, ge=0, description="α=1.5 exact match ≥ CE − margin (1 pt)")
    confidence: float = Field(0.95, gt=0, lt=1)


class FdivParams(PoolParams):
    """Everything the fdiv_losses pipeline reads."""

    dataset: DatasetName = "digits"
    pool_size: int | None = None
    scale: Literal["default", "full"] = Field(
        "default", description="full: the bigger LM runs (d 128, 4× steps, 5 seeds); same code"
    )
    iterations: int = Field(
        30,
        ge=1,
        description="minimum bisection halvings of Algorithm 1 (more until the bracket is below tol)",
    )
    reference: Reference = Field("unit", description="reference measure q: unit (1) or uniform (1/V)")
    losses: dict[str, LossSpec] = Field(min_length=1)
    baseline: str = "ce"
    method: str = "alpha15"
    classify_losses: list[str] = Field(min_length=1)
    lm_losses: list[str] = Field(min_length=1)
    sft_losses: list[str] = Field(min_length=1)
    distil_losses: list[str] = Field(min_length=1)
    classify: ClassifyParams = ClassifyParams()
    lm: LMParams = LMParams()
    sft: SFTParams = SFTParams()
    distil: DistilParams = DistilParams()
    claims: ClaimsParams = ClaimsParams()

    @model_validator(mode="after")
    def _labels_known(self) -> FdivParams:
        if self.baseline not in self.losses or self.losses[self.baseline].divergence != "kl":
            raise ValueError(f"baseline: {self.baseline!r} must name a kl entry of losses (cross-entropy)")
        if self.method not in self.losses:
            raise ValueError(f"method: {self.method!r} is not in losses")
        for field in ("classify_losses", "lm_losses", "sft_losses", "distil_losses"):
            names = getattr(self, field)
            unknown = [name for name in names if name not in self.losses]
            if unknown:
                raise ValueError(f"{field}: {', '.join(unknown)} not in losses")
            if field != "classify_losses" and not {self.baseline, self.method} <= set(names):
                raise ValueError(f"{field}: must include the baseline and the method")
        if self.distil.d_model % self.distil.heads:
            raise ValueError("distil.heads must divide distil.d_model")
        return self

    def lm_config(self) -> LMParams:
        """The LM settings at this scale (`full`: d 128, 4× steps)."""
        if self.scale == "default":
            return self.lm
        return self.lm.model_copy(update={"d_model": 128, "steps": self.lm.steps * 4})

    def run_seeds(self) -> list[int]:
        """The seeds at this scale (`full`: at least 5)."""
        if self.scale == "default" or len(self.seeds) >= 5:
            return list(self.seeds)
        return sorted(set(self.seeds) | set(range(max(self.seeds) + 1, max(self.seeds) + 6)))[:5]
