"""Training settings of a rationalizer (pydantic only: a params model imports this, never torch)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from stages.core.params import StrictModel

Objective = Literal["rnp", "a2i", "full"]
OBJECTIVES: tuple[Objective, ...] = ("rnp", "a2i", "full")
ENCODER_NAMES = ("gru", "gcn")  # the names `encoders.ENCODERS` registers (checked there)


class RationaleConfig(StrictModel):
    """One rationalizer's sizes, optimiser and loss weights (the defaults are the official code's weights)."""

    hidden: int = Field(64, ge=1, description="GRU hidden size per direction / GCN width")
    layers: int = Field(3, ge=1, description="GCN layers (graphs only)")
    dropout: float = Field(0.2, ge=0, lt=1, description="dropout before the selector's logits")
    epochs: int = Field(6, ge=1)
    batch_size: int = Field(64, ge=1)
    lr: float = Field(1e-3, gt=0, description="Adam learning rate of generator, predictor and attacker")
    sparsity: float | None = Field(
        None,
        gt=0,
        lt=1,
        description="target share of selected units (None: the planted fraction of the data)",
    )
    tau: float = Field(1.0, gt=0, description="Gumbel-softmax temperature")
    cls_weight: float = Field(0.9, gt=0)
    sparsity_weight: float = Field(12.0, ge=0)
    continuity_weight: float = Field(10.0, ge=0, description="ignored on graphs (edges have no order)")
    instruction_weight: float = Field(1.0, ge=0, description="λ of A2I's instruction term")
    attack_from_epoch: int = Field(0, ge=0, description="first epoch the attacker is trained and instructs")
