"""FixMatch's settings as a plain params model (importable without torch), read by `stages.models.fixmatch`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from stages.core.params import StrictModel


class FixMatchConfig(StrictModel):
    """How FixMatch trains (Sohn et al., 2020): a labelled batch of `batch_size` and `mu` × as many unlabelled
    images per step; weak = flip + crop, strong = flip + crop + RandAugment-style ops + cutout."""

    steps: int = Field(100, ge=0, description="gradient steps (each: one labelled and one unlabelled batch)")
    batch_size: int = Field(32, ge=1, description="labelled images per step (B)")
    mu: int = Field(7, ge=1, le=7, description="unlabelled images per labelled image (μ; the paper's 7)")
    threshold: float = Field(
        0.95, ge=0, le=1, description="τ: weak-view confidence that yields a pseudo-label"
    )
    unlabelled_weight: float = Field(1.0, ge=0, description="λ_u")
    learning_rate: float = Field(1e-3, gt=0)
    weight_decay: float = Field(0.0, ge=0)
    crop_padding: int = Field(2, ge=0, description="weak and strong views: pixels of padding (largest shift)")
    flip: bool = Field(True, description="random horizontal flips in both views (false for digits)")
    strong_ops: int = Field(2, ge=1, description="RandAugment: ops per image")
    strong_magnitude: float = Field(
        1.0, gt=0, le=1, description="RandAugment: largest magnitude (drawn uniformly)"
    )
    cutout: int = Field(
        14, ge=0, description="side of the cutout square in pixels (FixMatch: half the image side)"
    )
    ema_decay: float = Field(
        0.999, ge=0, lt=1, description="decay of the EMA of the weights the run returns (FixMatch: 0.999)"
    )
    pseudo_labels_from: Literal["model", "ema"] = Field(
        "model",
        description="which weights pseudo-label the weak views: the trained model (FixMatch) or its EMA",
    )
