"""How the shared models are built and trained: plain params models, importable without torch.

Params sections and method configs import these, not the training code, so a stage that only reads a config
does not depend on (and is not rerun by edits to) the training loops.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from stages.core.params import StrictModel

GnnKind = Literal["gin", "gcn"]


class TrainConfig(StrictModel):
    """How a classifier is trained."""

    epochs: int = Field(10, ge=1)
    batch_size: int = Field(128, ge=1)
    learning_rate: float = Field(1e-3, gt=0)
    weight_decay: float = Field(0.0, ge=0)
    hidden: tuple[int, ...] = (256, 128)


class GnnConfig(StrictModel):
    """How the graph neural network is built and trained."""

    kind: GnnKind = "gin"
    hidden: int = Field(32, ge=1)
    layers: int = Field(3, ge=1)
    epochs: int = Field(30, ge=1)
    batch_size: int = Field(64, ge=1)
    learning_rate: float = Field(0.005, gt=0)
    weight_decay: float = Field(0.0, ge=0)
