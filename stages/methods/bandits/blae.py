"""BLAE (Yu & Oh, ICML 2025): batched arm elimination with a regularised G-optimal design.

Batch ℓ = 1, 2, … has a fixed size n_ℓ = ⌈T^{1 − 2^{−ℓ}}⌉ (the last one cut at T), so the run uses
M(T) = min{m : Σ_{ℓ≤m} n_ℓ ≥ T} ≤ ⌈log₂log₂T⌉ + 2 batches. In batch ℓ on the active set A:

1. solve the regularised G-optimal design π_ℓ over A with information matrix Σ_x π_x x xᵀ + (λ/n_ℓ)I, so
   that n_ℓ times it is the ridge Gram matrix of the batch (`design.optimal_design`);
2. pull each x about n_ℓ π_ℓ(x) times (⌈n_ℓπ⌉, trimmed to exactly n_ℓ pulls; `design.round_allocation`);
3. θ̂_ℓ = ridge regression (λ) on this batch's pulls only;
4. drop x when max_{y∈A} ⟨y − x, θ̂_ℓ⟩ > 2ε_ℓ, ε_ℓ = c √(2 g_ℓ L / n_ℓ) with g_ℓ the design's maximal
   variance (≤ d) and L = min(log(2KT), d + log(2T)): a union bound over the K arms, capped in the large-K
   regime (K > e^d) by the covering term d + log T that the paper's bound √(dT)(√log(KT) ∧ √(d + log T))
   carries (Theorem 1; `large_k_cap: false` keeps log(2KT), whose width grows with log K without limit).
   The width constant c, the constant in front of d and λ are not given by the paper (params, README).

Once one arm is left it is played until T (in the next batch).
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import Field

from stages.core.params import StrictModel
from stages.methods.bandits.base import BanditAlgorithm, pulls_in_order, ridge_estimate
from stages.methods.bandits.design import optimal_design, round_allocation
from stages.methods.bandits.trace import Recorder, Trace


def batch_sizes(horizon: int) -> list[int]:
    """n_ℓ = ⌈T^{1 − 2^{−ℓ}}⌉ for ℓ = 1, 2, … until they cover T, the last one cut so they sum to T."""
    sizes: list[int] = []
    level = 1
    while sum(sizes) < horizon:
        size = math.ceil(horizon ** (1 - 2.0**-level))
        sizes.append(min(size, horizon - sum(sizes)))
        level += 1
    return sizes


def batch_bound(horizon: int) -> int:
    """⌈log₂log₂T⌉ + 2, the paper's batch bound (T < 4 counts as T = 4)."""
    return math.ceil(math.log2(math.log2(max(horizon, 4)))) + 2


def confidence_log(n_arms: int, dim: int, horizon: int, large_k_cap: bool = True) -> float:
    """L in ε_ℓ: log(2KT), or min(log(2KT), d + log(2T)) with the large-K cap (it binds iff K > e^d)."""
    union = math.log(2 * n_arms * max(horizon, 1))
    return min(union, dim + math.log(2 * max(horizon, 1))) if large_k_cap else union


class BLAE(BanditAlgorithm):
    """Batched Linear bandit with Arm Elimination (regularised G-optimal design, per-batch ridge)."""

    name = "blae"
    eliminates = True

    class Options(StrictModel):
        ridge: float = Field(
            1.0, gt=0, description="λ: ridge of the per-batch regression; design ridge λ/n_ℓ"
        )
        width: float = Field(1.0, gt=0, description="c in ε_ℓ = c √(2 g_ℓ L/n_ℓ)")
        design_tol: float = Field(1e-3, gt=0, description="Frank–Wolfe duality-gap tolerance")
        large_k_cap: bool = Field(
            True, description="log term min(log(2KT), d + log(2T)) (true) or log(2KT) (false)"
        )

    def play(self, arms: np.ndarray, recorder: Recorder) -> Trace:
        options, horizon = self.options, recorder.horizon
        active = np.arange(len(arms))
        confidence = confidence_log(len(arms), arms.shape[1], horizon, options.large_k_cap)
        design_gaps, widths = [], []
        for size in batch_sizes(horizon):
            if recorder.remaining == 0:
                break
            if len(active) == 1:
                recorder.play(np.full(recorder.remaining, active[0]))
                break
            design = optimal_design(arms[active], reg=options.ridge / size, tol=options.design_tol)
            counts = round_allocation(design.weights, size)
            pulled, rewards = recorder.play(pulls_in_order(active, counts, recorder.remaining))
            if recorder.remaining == 0:
                break
            theta = ridge_estimate(arms[pulled], rewards, options.ridge)
            estimates = arms[active] @ theta
            width = options.width * math.sqrt(2 * design.max_variance * confidence / size)
            keep = estimates >= estimates.max() - 2 * width
            recorder.eliminate(active[~keep])
            active = active[keep]
            design_gaps.append(design.gap)
            widths.append(width)
        return recorder.finish(
            self.name,
            survivors=active,
            ridge=options.ridge,
            width=options.width,
            design_tol=options.design_tol,
            large_k_cap=options.large_k_cap,
            confidence_log=round(confidence, 6),
            max_design_gap=float(max(design_gaps, default=0.0)),
            epsilons=[round(w, 6) for w in widths],
        )
