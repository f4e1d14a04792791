"""The PPO loss (Schulman et al. 2017): clipped surrogate, squared value error, entropy bonus."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class PPOLoss:
    """The loss to back-propagate and its parts (detached floats for logging)."""

    total: torch.Tensor
    policy: float
    value: float
    entropy: float
    clip_fraction: float


def clipped_policy_loss(
    log_prob: torch.Tensor, old_log_prob: torch.Tensor, advantages: torch.Tensor, clip: float
) -> torch.Tensor:
    """−mean(min(ρ A, clip(ρ, 1 − ε, 1 + ε) A)) with ρ = exp(log π − log π_old)."""
    ratio = torch.exp(log_prob - old_log_prob)
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1.0 - clip, 1.0 + clip) * advantages
    return -torch.min(unclipped, clipped).mean()


def ppo_loss(
    log_prob: torch.Tensor,
    old_log_prob: torch.Tensor,
    advantages: torch.Tensor,
    values: torch.Tensor,
    returns: torch.Tensor,
    entropy: torch.Tensor,
    clip: float,
    ent_coef: float,
    vf_coef: float,
    value_scale: float = 0.5,
) -> PPOLoss:
    """policy loss − ent_coef · mean entropy + vf_coef · value_scale · mean (V − R)².

    value_scale ½ is the value loss as gbrl_sb3 writes it (the value gradient per sample is then
    vf_coef · (V − R) / N, the functional gradient GBRL fits); 1 is SB3's PPO (`F.mse_loss`, vf_coef 0.5).
    """
    policy = clipped_policy_loss(log_prob, old_log_prob, advantages, clip)
    value = value_scale * torch.mean((values - returns) ** 2)
    mean_entropy = entropy.mean()
    total = policy - ent_coef * mean_entropy + vf_coef * value
    with torch.no_grad():
        fraction = (torch.abs(torch.exp(log_prob - old_log_prob) - 1.0) > clip).float().mean()
    return PPOLoss(total, policy.item(), value.item(), mean_entropy.item(), fraction.item())
