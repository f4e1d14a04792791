"""How the shared models are built and trained: plain params models, importable without torch.

Params sections and method configs import these, not the training code, so a stage that only reads a config
does not depend on (and is not rerun by edits to) the training loops.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PositiveInt

from stages.core.params import StrictModel

GnnKind = Literal["gin", "gcn"]
Architecture = Literal["mlp", "cnn"]
Augment = Literal["none", "flip_crop"]


class TrainConfig(StrictModel):
    """How a classifier is trained."""

    epochs: int = Field(10, ge=1)
    batch_size: int = Field(128, ge=1)
    learning_rate: float = Field(1e-3, gt=0, allow_inf_nan=False)
    weight_decay: float = Field(0.0, ge=0, allow_inf_nan=False)
    hidden: tuple[PositiveInt, ...] = Field(
        (256, 128), description="dense hidden widths (after the convolutions for cnn)"
    )
    architecture: Architecture = Field(
        "mlp", description="mlp: standardised features; cnn: image rows in [0, 1]"
    )
    channels: tuple[PositiveInt, ...] = Field(
        (16, 32), description="cnn: 3×3 convolution widths, each followed by pooling"
    )
    image_shape: tuple[int, ...] | None = Field(
        None, description="(H, W) or (C, H, W) of image rows (cnn, flip_crop); None: a square grey image"
    )
    augment: Augment = Field("none", description="flip_crop: random crop of a padded image + horizontal flip")
    crop_padding: int = Field(2, ge=0, description="flip_crop: pixels of zero padding (= the largest shift)")
    flip: bool = Field(True, description="flip_crop: random horizontal flips (false for digits)")


class GnnConfig(StrictModel):
    """How the graph neural network is built and trained."""

    kind: GnnKind = "gin"
    hidden: int = Field(32, ge=1)
    layers: int = Field(3, ge=1)
    epochs: int = Field(30, ge=1)
    batch_size: int = Field(64, ge=1)
    learning_rate: float = Field(0.005, gt=0, allow_inf_nan=False)
    weight_decay: float = Field(0.0, ge=0, allow_inf_nan=False)
