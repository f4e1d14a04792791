"""The f-softargmax by bisection (Algorithm 1 of Roulet et al., ICML 2025), batched over leading dimensions.

    p_j = q_j · (f*)′(max(θ_j − τ, f′(0))),   τ the root of  Σ_j q_j (f*)′(max(θ_j − τ, f′(0))) = 1.

θ is divided by the temperature and shifted by its row maximum (so θ_max = 0). Every p_j ≤ 1 gives
τ ≥ θ_j − f′(1/q_j) for each j, and Σp = 1 gives τ ≤ θ_max − f′(1/Σq), so the root lies in the bracket
[max_j (θ̃_j − f′(1/q_j)), −f′(1/Σq)] (for unit q: [0, −f′(1/V)]). The bracket is halved at least
`iterations` times and as many more as it takes to bring its width below `tol` (⌈log₂(width / tol)⌉, from
the widest row), so a wide bracket (a tiny reference mass, a huge q) still converges; the final width per row
is reported in `Solution.width`. It is ≤ tol unless the root itself is so large that floats cannot resolve
tol there (|τ| · eps > tol, e.g. τ ≈ −1e11 for q = 1e-12 everywhere): then the bracket stops at a few ulps
of τ, which is as close as the dtype gets. τ is the bracket's midpoint and p is renormalised to sum to 1 at the end.
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
DEFAULT_TOLERANCE = 1e-6


@dataclass
class Solution:
    """Algorithm 1's output for a batch: p, the threshold τ (per row, of the shifted scores), the shifted
    scores θ̃, the active entries, the reference measure used (None for unit q without masked entries), the
    mass Σ_j q_j (f*)′(v_j) at τ before p was renormalised (per row), the final bracket width (per row) and
    the number of halvings run."""

    p: Tensor
    tau: Tensor
    shifted: Tensor
    active: Tensor | None
    q: Tensor | None
    div: FDivergence
    mass: Tensor
    width: Tensor
    halvings: int

    @property
    def v(self) -> Tensor:
        """The clamped arguments v = max(θ̃ − τ, f′(0)) (computed on demand: only the loss value needs them)."""
        return _ratio(self.div, self.shifted, self.tau.unsqueeze(-1))[1]


def check_options(theta: Tensor, temperature: float, iterations: int, tol: float) -> None:
    """Raise a ValueError naming the argument for a bad θ type, temperature, iterations or tol."""
    if not isinstance(theta, Tensor) or not theta.is_floating_point() or theta.ndim < 1:
        raise ValueError("theta: expected a floating-point tensor with a last (vocabulary) dimension")
    if theta.shape[-1] < 1:
        raise ValueError("theta: the vocabulary dimension is empty")
    if not (isinstance(temperature, int | float) and math.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature: must be a finite number > 0, got {temperature!r}")
    if not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations: must be an integer ≥ 1, got {iterations!r}")
    if not (isinstance(tol, int | float) and math.isfinite(tol) and tol > 0):
        raise ValueError(f"tol: must be a finite number > 0, got {tol!r}")


def check_scores(theta: Tensor) -> None:
    """Raise a ValueError for NaN or +∞ scores or a fully masked row (slow: run only when a row extreme is not
    finite)."""
    if torch.isnan(theta).any() or torch.isposinf(theta).any():
        raise ValueError("theta: contains NaN or +inf (use -inf to mask an entry)")
    if theta.numel() and torch.isneginf(theta).all(dim=-1).any():
        raise ValueError("theta: a row has every entry masked (-inf); nothing to put mass on")


def check_reference(theta: Tensor, q: Tensor | None) -> None:
    """Raise a ValueError for a q that does not match θ's last dimension or is not finite and positive."""
    if q is None:
        return
    if not isinstance(q, Tensor) or q.shape[-1] != theta.shape[-1]:
        raise ValueError(f"q: expected a tensor whose last dimension is {theta.shape[-1]} (the vocabulary)")
    if not (torch.isfinite(q).all() and (q > 0).all()):
        raise ValueError("q: the reference measure must be finite and strictly positive")


def check_arguments(
    theta: Tensor, q: Tensor | None, temperature: float, iterations: int, tol: float = DEFAULT_TOLERANCE
) -> None:
    """Raise a ValueError naming the argument for anything Algorithm 1 cannot take."""
    check_options(theta, temperature, iterations, tol)
    check_scores(theta)
    check_reference(theta, q)


def _bracket(div: FDivergence, shifted: Tensor, q: Tensor | None) -> tuple[Tensor, Tensor]:
    """τ ∈ [max_j (θ̃_j − f′(1/q_j)), −f′(1/Σq)] for max-shifted scores (per row, shape (..., 1))."""
    rows = (*shifted.shape[:-1], 1)
    if q is None:
        ends = div.f_prime(torch.tensor([1.0, 1.0 / shifted.shape[-1]], dtype=torch.float64))
        low = torch.full(rows, -float(ends[0]), dtype=shifted.dtype, device=shifted.device)
        high = torch.full(rows, -float(ends[1]), dtype=shifted.dtype, device=shifted.device)
        return low, high
    bounds = torch.where(q > 0, shifted - div.f_prime(1 / q), -math.inf)
    return bounds.amax(dim=-1, keepdim=True), -div.f_prime(1 / q.sum(dim=-1, keepdim=True))


def halvings_needed(low: Tensor, high: Tensor, iterations: int, tol: float) -> int:
    """max(iterations, ⌈log₂(widest bracket / tol)⌉); a bracket that is not finite raises a ValueError."""
    width = float((high - low).max()) if low.numel() else 0.0
    if not math.isfinite(width):
        raise ValueError(
            "q: the bisection bracket is not finite in this dtype (a reference mass too small or too large); "
            "use float64 scores or rescale q"
        )
    return max(iterations, math.ceil(math.log2(width / tol))) if width > tol else iterations


def _ratio(div: FDivergence, shifted: Tensor, tau: Tensor) -> Tensor:
    """(f*)′(max(θ̃ − τ, f′(0))), and the clamped argument."""
    v = shifted - tau
    if div.sparse:
        v = torch.clamp(v, min=div.f_prime_zero)
    return div.fstar_prime(v), v


def _shift(theta: Tensor, temperature: float) -> tuple[Tensor, Tensor | None]:
    """θ / temperature minus its row maximum, and the mask of −∞ entries (None when there are none).

    The slow value checks run only when a row extreme is not finite (NaN, ±∞)."""
    top, bottom = theta.amax(dim=-1, keepdim=True), theta.amin(dim=-1, keepdim=True)
    finite = bool(torch.isfinite(top).all() and torch.isfinite(bottom).all()) if theta.numel() else True
    if not finite:
        check_scores(theta)
    if temperature == 1:
        shifted = theta - top
    else:
        shifted = theta / temperature
        shifted.sub_(shifted.amax(dim=-1, keepdim=True))
    if finite:
        return shifted, None
    masked = torch.isneginf(shifted)
    return shifted, masked


def _bisect(
    div: FDivergence,
    shifted: Tensor,
    affine: Tensor | None,
    measure: Tensor | None,
    low: Tensor,
    width: Tensor,
    halvings: int,
) -> tuple[Tensor, Tensor]:
    """Halve the bracket [low, low + width] `halvings` times: keep the upper half where the mass at the
    midpoint exceeds 1 (τ too small). Returns the final low end and width (per row, shape (..., 1))."""
    buffer = None if affine is None else torch.empty_like(affine)
    for _ in range(halvings):
        width = width * 0.5
        tau = low + width
        if affine is None:
            ratio, _ = _ratio(div, shifted, tau)
        else:
            ratio = div.ratio_of_affine_(torch.sub(affine, tau, alpha=div.affine[0], out=buffer))
        mass = (ratio if measure is None else ratio.mul_(measure)).sum(dim=-1, keepdim=True)
        low = torch.where(mass > 1, tau, low)
    return low, width


def solve(
    theta: Tensor,
    div: FDivergence,
    q: Tensor | None = None,
    temperature: float = 1.0,
    iterations: int = DEFAULT_ITERATIONS,
    tol: float = DEFAULT_TOLERANCE,
) -> Solution:
    """Run Algorithm 1 on the last dimension of `theta` (no autograd; see :func:`f_softargmax`).

    At least `iterations` halvings, and more until the bracket on τ is narrower than `tol`."""
    check_options(theta, temperature, iterations, tol)
    check_reference(theta, q)
    with torch.no_grad():
        shifted, masked = _shift(theta, temperature)
        active = None if masked is None else ~masked
        measure = None
        if q is not None or masked is not None:
            measure = torch.ones_like(shifted) if q is None else q.to(shifted).expand_as(shifted)
            measure = measure.masked_fill(masked, 0.0) if masked is not None else measure
        low, high = _bracket(div, shifted, measure)
        halvings = halvings_needed(low, high, iterations, tol)
        affine = None if div.affine is None else shifted * div.affine[0] + div.affine[1]
        low, width = _bisect(div, shifted, affine, measure, low, high - low, halvings)
        tau = low + width / 2
        if affine is None:
            ratio, _ = _ratio(div, shifted, tau)
        else:
            ratio = div.ratio_of_affine_(affine.sub_(tau, alpha=div.affine[0]))
        p = ratio if measure is None else ratio.mul_(measure)
        if masked is not None:
            p.masked_fill_(masked, 0.0)
        mass = p.sum(dim=-1, keepdim=True)
        p.div_(mass)
    return Solution(
        p=p, tau=tau.squeeze(-1), shifted=shifted, active=active, q=measure, div=div,
        mass=mass.squeeze(-1), width=width.squeeze(-1), halvings=halvings,
    )  # fmt: skip


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
    def forward(ctx, theta, div, q, temperature, iterations, tol):
        solution = solve(theta, div, q, temperature, iterations, tol)
        ctx.save_for_backward(solution.p, solution.q if solution.q is not None else torch.empty(0))
        ctx.div, ctx.temperature, ctx.has_q = div, temperature, solution.q is not None
        return solution.p

    @staticmethod
    def backward(ctx, upstream):
        p, q = ctx.saved_tensors
        weights = jacobian_weights(ctx.div, p, q if ctx.has_q else None)
        return jvp_backward(weights, upstream) / ctx.temperature, None, None, None, None, None


def f_softargmax(
    theta: Tensor,
    div: FDivergence,
    q: Tensor | None = None,
    temperature: float = 1.0,
    iterations: int = DEFAULT_ITERATIONS,
    tol: float = DEFAULT_TOLERANCE,
) -> Tensor:
    """p = f-softargmax(θ / temperature; q) over the last dimension, differentiable in θ.

    `div` is a table entry (:func:`stages.methods.losses.divergences.divergence`); `q` (shape (V,) or
    θ's shape, > 0) is the reference measure, unit when None. Rows sum to 1; entries are exactly 0 only where
    f′(0) is finite (α > 1, χ²) or θ is −∞.
    The bisection runs at least `iterations` halvings and until its bracket on τ is narrower than `tol`.
    """
    return _FSoftargmax.apply(theta, div, q, temperature, iterations, tol)
