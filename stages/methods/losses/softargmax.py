"""The f-softargmax by bisection (Algorithm 1 of Roulet et al., ICML 2025), batched over leading dimensions.

    p_j = q_j · (f*)′(max(θ_j − τ, f′(0))),   τ the root of  Σ_j q_j (f*)′(max(θ_j − τ, f′(0))) = 1.

θ is divided by the temperature and shifted by its row maximum (so θ_max = 0); the root lies in the bracket
[−f′(1/q_argmax), −f′(1/Σq)] and is halved `iterations` times; p is renormalised to sum to 1 at the end.
Entries with θ_j = −∞ are masked out: they get p_j = 0 and no mass of q. The backward pass is the exact
Jacobian-vector product (no differentiation through the bisection):

    ∂p/∂θ · u = w ⊙ (u − ⟨w, u⟩ / Σw),   w_j = q_j (f*)″(θ_j − τ) on the support, 0 off it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from stages.methods.losses.divergences import FDivergence

DEFAULT_ITERATIONS = 30


@dataclass
class Solution:
    """Algorithm 1's output for a batch: p, the threshold τ (per row, of the shifted scores), the shifted
    scores θ̃, the active entries and the reference measure used (None for unit q without masked entries)."""

    p: Tensor
    tau: Tensor
    shifted: Tensor
    active: Tensor | None
    q: Tensor | None
    div: FDivergence

    @property
    def v(self) -> Tensor:
        """The clamped arguments v = max(θ̃ − τ, f′(0)) (computed on demand: only the loss value needs them)."""
        return _ratio(self.div, self.shifted, self.tau.unsqueeze(-1))[1]


def check_arguments(theta: Tensor, q: Tensor | None, temperature: float, iterations: int) -> None:
    """Raise a ValueError naming the argument for anything Algorithm 1 cannot take."""
    if not isinstance(theta, Tensor) or not theta.is_floating_point() or theta.ndim < 1:
        raise ValueError("theta: expected a floating-point tensor with a last (vocabulary) dimension")
    if theta.shape[-1] < 1:
        raise ValueError("theta: the vocabulary dimension is empty")
    if not (isinstance(temperature, int | float) and math.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature: must be a finite number > 0, got {temperature!r}")
    if not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations: must be an integer ≥ 1, got {iterations!r}")
    if torch.isnan(theta).any() or torch.isposinf(theta).any():
        raise ValueError("theta: contains NaN or +inf (use -inf to mask an entry)")
    if theta.numel() and torch.isneginf(theta).all(dim=-1).any():
        raise ValueError("theta: a row has every entry masked (-inf); nothing to put mass on")
    if q is not None:
        if not isinstance(q, Tensor) or q.shape[-1] != theta.shape[-1]:
            raise ValueError(
                f"q: expected a tensor whose last dimension is {theta.shape[-1]} (the vocabulary)"
            )
        if not (torch.isfinite(q).all() and (q > 0).all()):
            raise ValueError("q: the reference measure must be finite and strictly positive")


def _bracket(div: FDivergence, shifted: Tensor, q: Tensor | None) -> tuple[Tensor, Tensor]:
    """τ ∈ [−f′(1/q_argmax), −f′(1/Σq)] for max-shifted scores (per row, shape (..., 1))."""
    rows = (*shifted.shape[:-1], 1)
    if q is None:
        ends = div.f_prime(torch.tensor([1.0, 1.0 / shifted.shape[-1]], dtype=torch.float64))
        low = torch.full(rows, -float(ends[0]), dtype=shifted.dtype, device=shifted.device)
        high = torch.full(rows, -float(ends[1]), dtype=shifted.dtype, device=shifted.device)
        return low, high
    top = torch.gather(q, -1, shifted.argmax(dim=-1, keepdim=True))
    total = q.sum(dim=-1, keepdim=True)
    return -div.f_prime(1 / top), -div.f_prime(1 / total)


def _ratio(div: FDivergence, shifted: Tensor, tau: Tensor) -> Tensor:
    """(f*)′(max(θ̃ − τ, f′(0))), and the clamped argument."""
    v = shifted - tau
    if div.sparse:
        v = torch.clamp(v, min=div.f_prime_zero)
    return div.fstar_prime(v), v


def solve(
    theta: Tensor,
    div: FDivergence,
    q: Tensor | None = None,
    temperature: float = 1.0,
    iterations: int = DEFAULT_ITERATIONS,
) -> Solution:
    """Run Algorithm 1 on the last dimension of `theta` (no autograd; see :func:`f_softargmax`)."""
    check_arguments(theta, q, temperature, iterations)
    with torch.no_grad():
        shifted = theta / temperature
        shifted = shifted.sub_(shifted.amax(dim=-1, keepdim=True))
        masked = torch.isneginf(shifted)
        any_masked = bool(masked.any())
        active = ~masked if any_masked else None
        measure = None
        if q is not None or any_masked:
            measure = torch.ones_like(shifted) if q is None else q.to(shifted).expand_as(shifted)
            measure = measure.masked_fill(masked, 0.0) if any_masked else measure
        low, high = _bracket(div, shifted, measure)
        affine = None if div.affine is None else shifted * div.affine[0] + div.affine[1]
        for _ in range(iterations):
            tau = (low + high) / 2
            if affine is None:
                ratio, _ = _ratio(div, shifted, tau)
            else:
                ratio = div.ratio_of_affine_(affine - div.affine[0] * tau)
            mass = (ratio if measure is None else measure * ratio).sum(dim=-1, keepdim=True)
            too_much = mass > 1
            low = torch.where(too_much, tau, low)
            high = torch.where(too_much, high, tau)
        del affine
        tau = (low + high) / 2
        if div.affine is None:
            ratio, _ = _ratio(div, shifted, tau)
        else:
            ratio = div.ratio_of_affine_(
                (shifted * div.affine[0]).add_(div.affine[1]).sub_(div.affine[0] * tau)
            )
        p = ratio if measure is None else ratio.mul_(measure)
        if any_masked:
            p.masked_fill_(masked, 0.0)
        p.div_(p.sum(dim=-1, keepdim=True))
    return Solution(p=p, tau=tau.squeeze(-1), shifted=shifted, active=active, q=measure, div=div)


def jacobian_weights(div: FDivergence, p: Tensor, q: Tensor | None) -> Tensor:
    """w_j = q_j (f*)″ at the solution, written in g_j = p_j/q_j; 0 off the support."""
    weights = div.curvature(p) if q is None else q * div.curvature(p / q)
    return weights.masked_fill_(p <= 0, 0.0)


def jvp_backward(weights: Tensor, upstream: Tensor) -> Tensor:
    """w ⊙ (u − ⟨w, u⟩/Σw): the f-softargmax's Jacobian (symmetric) applied to `upstream`."""
    weighted = weights * upstream
    mean = weighted.sum(dim=-1, keepdim=True) / weights.sum(dim=-1, keepdim=True)
    return weighted.sub_(weights * mean)


class _FSoftargmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, theta, div, q, temperature, iterations):
        solution = solve(theta, div, q, temperature, iterations)
        ctx.save_for_backward(solution.p, solution.q if solution.q is not None else torch.empty(0))
        ctx.div, ctx.temperature, ctx.has_q = div, temperature, solution.q is not None
        return solution.p

    @staticmethod
    def backward(ctx, upstream):
        p, q = ctx.saved_tensors
        weights = jacobian_weights(ctx.div, p, q if ctx.has_q else None)
        return jvp_backward(weights, upstream) / ctx.temperature, None, None, None, None


def f_softargmax(
    theta: Tensor,
    div: FDivergence,
    q: Tensor | None = None,
    temperature: float = 1.0,
    iterations: int = DEFAULT_ITERATIONS,
) -> Tensor:
    """p = f-softargmax(θ / temperature; q) over the last dimension, differentiable in θ.

    `div` is a table entry (:func:`stages.methods.losses.divergences.divergence`); `q` (shape (V,) or
    θ's shape, > 0) is the reference measure, unit when None. Rows sum to 1; entries are exactly 0 only where
    f′(0) is finite (α > 1, χ²) or θ is −∞.
    """
    return _FSoftargmax.apply(theta, div, q, temperature, iterations)
