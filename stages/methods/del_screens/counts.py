"""Count likelihoods of DEL sequencing reads and the Poisson-bound enrichment.

DEL-Compose models each replicate's read count of a compound as zero-inflated Poisson (ZIP): with probability
π a structural zero, else Poisson(λ). The negative-binomial option follows the official code:
NegativeBinomial(total_count=λ, probs=σ(γ)), whose mean λ·p/(1−p) is not λ. The log-likelihoods here are
torch functions (used in training) and take π through its logit for numerical stability.

`target_enrichment` is the ratio of the lower 95% exact (Garwood) Poisson bound of the mean target count to
the upper bound of the mean matrix count.
"""

from __future__ import annotations

import numpy as np
from scipy import stats


def poisson_log_prob(counts, rate):
    """log Poisson(k; λ) = k log λ − λ − log k! (torch tensors, elementwise)."""
    import torch

    return torch.xlogy(counts, rate) - rate - torch.lgamma(counts + 1)


def zip_log_prob(counts, rate, zero_logit):
    """log ZIP(k; λ, π) with π = σ(zero_logit): log(π + (1−π)e^{−λ}) at k = 0, log(1−π) + log Poisson else."""
    import torch
    import torch.nn.functional as F

    log_pi = F.logsigmoid(zero_logit)
    log_not_pi = F.logsigmoid(-zero_logit)
    at_zero = torch.logaddexp(log_pi, log_not_pi - rate)
    positive = log_not_pi + poisson_log_prob(counts, rate)
    return torch.where(counts == 0, at_zero, positive)


def negative_binomial_log_prob(counts, total_count, probs_logit):
    """log NegativeBinomial(k; total_count, p = σ(probs_logit)) as torch defines it:
    C(k + r − 1, k) (1 − p)^r p^k."""
    import torch
    import torch.nn.functional as F

    return (
        torch.lgamma(counts + total_count)
        - torch.lgamma(total_count)
        - torch.lgamma(counts + 1)
        + total_count * F.logsigmoid(-probs_logit)
        + counts * F.logsigmoid(probs_logit)
    )


def sample_zip(rng: np.random.Generator, rate: np.ndarray, zero_prob: np.ndarray | float) -> np.ndarray:
    """Draw ZIP counts: 0 with probability π, else Poisson(λ)."""
    rate = np.asarray(rate, dtype=np.float64)
    structural = rng.random(rate.shape) < zero_prob
    return np.where(structural, 0, rng.poisson(rate)).astype(np.int64)


def poisson_mean_bounds(total: np.ndarray, n: int, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Exact (Garwood) bounds of the mean of `n` Poisson counts summing to `total`: chi² quantiles / 2n.

    lower = χ²_{α/2}(2k)/2 (0 at k = 0), upper = χ²_{1−α/2}(2k + 2)/2, both divided by n.
    """
    total = np.asarray(total, dtype=np.float64)
    if (total < 0).any():
        raise ValueError("poisson_mean_bounds: counts must be non-negative")
    alpha = 1 - confidence
    lower = np.where(total > 0, stats.chi2.ppf(alpha / 2, 2 * np.maximum(total, 1e-300)) / 2, 0.0)
    upper = stats.chi2.ppf(1 - alpha / 2, 2 * total + 2) / 2
    return lower / n, upper / n


def enrichment(target: np.ndarray, matrix: np.ndarray, confidence: float = 0.95) -> np.ndarray:
    """target_enrichment per compound: lower bound of the mean target count / upper bound of the mean matrix
    count (`target`, `matrix`: compounds × replicates)."""
    target, matrix = np.atleast_2d(target), np.atleast_2d(matrix)
    lower, _ = poisson_mean_bounds(target.sum(axis=1), target.shape[1], confidence)
    _, upper = poisson_mean_bounds(matrix.sum(axis=1), matrix.shape[1], confidence)
    return lower / upper
