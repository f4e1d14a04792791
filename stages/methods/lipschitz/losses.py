"""Training losses of certifiably robust nets: logit annealing (LA) and cross-entropy with the certificate
regulariser (CE + CR)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def logit_annealing_loss(
    logits: torch.Tensor,
    labels: torch.Tensor,
    temperature: float = 0.75,
    offset: float = 2.0,
    beta: float = 5.0,
    alpha: float = 0.25,
    offset_scale: float = math.sqrt(2),
) -> torch.Tensor:
    """LA: mean over rows of T · α (1 − p_t)^β (−log p_t), p = softmax((z − ξ√2 · onehot(y)) / T).

    The LipConvNet code's constants: ξ multiplied by √2 (`offset_scale`), α = 0.25; at T = 1, ξ = 0, β = 0 and
    α = 1 it is cross-entropy."""
    shifted = (logits - offset * offset_scale * F.one_hot(labels, logits.shape[1])) / temperature
    log_p = F.log_softmax(shifted, dim=1).gather(1, labels[:, None])[:, 0]
    weight = (1 - log_p.exp()).clamp_min(0) ** beta
    return temperature * (alpha * weight * -log_p).mean()


def ce_cr_loss(
    logits: torch.Tensor, labels: torch.Tensor, radii: torch.Tensor, gamma: float = 0.5
) -> torch.Tensor:
    """CE + CR: cross-entropy − γ · mean ReLU(radius) (the certificate regulariser; radii w.r.t. the label)."""
    return F.cross_entropy(logits, labels) - gamma * F.relu(radii).mean()
