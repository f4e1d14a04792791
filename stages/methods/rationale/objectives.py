"""The RNP objective and A2I's two extra terms (weights from `RationaleConfig`).

Per batch, with the attacker's selection `Z_A` fixed:

1. generator + predictor minimise ``cls·CE(P(Z), Y) + sp·|Σz/Σmask − s| + co·mean|z_t − z_{t−1}|``
   and, for A2I, ``− cls·λ·mean(min(CE(P(Z_A), 1 − Y), ln 2))`` (the instruction: it pushes the predictor away
   from the flipped label only while p(1 − Y | Z_A) > 1/2, and reaches the predictor only);
2. with generator and predictor fixed, the attacker minimises ``cls·CE(P(Z_A), 1 − Y)`` plus the same sparsity
   and continuity terms (the inspection).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

LN2 = math.log(2.0)


def sparsity_loss(z: torch.Tensor, mask: torch.Tensor, target: float) -> torch.Tensor:
    """|selected / real units − target| over the whole batch."""
    return (z.sum() / mask.sum().clamp_min(1.0) - target).abs()


def instruction_loss(attacked_logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """−mean(min(CE(P(Z_A), 1 − Y), ln 2)): zero gradient for a row once p(1 − Y | Z_A) ≤ 1/2."""
    flipped = F.cross_entropy(attacked_logits, 1 - labels, reduction="none")
    return -torch.clamp(flipped, max=LN2).mean()


def attack_loss(attacked_logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """CE(P(Z_A), 1 − Y): the attacker wants the predictor to read the opposite label."""
    return F.cross_entropy(attacked_logits, 1 - labels)
