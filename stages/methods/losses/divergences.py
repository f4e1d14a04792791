"""The table of f-divergences: each generator f with f′, (f*)′, f* and the pieces the bisection needs.

D_f(p, q) = Σ_j q_j f(p_j / q_j) for a convex f with f(1) = 0 (every f here also has f′(1) = 0, which adds
nothing on the simplex but fixes the scale of τ). For each f the table holds, as torch functions:

- `f(u)`, `f_prime(u)` on u ≥ 0 (u > 0 for f′) and `f_prime_zero` = f′(0) (−∞ when f′ is unbounded at 0);
- `fstar_prime(v)` = (f*)′(v) = (f′)⁻¹(v), the ratio p_j/q_j at v = θ_j − τ (called g below);
- `fstar(v)` = f*(v) = v·g − f(g), and `fstar_plus_f0(v)` = f*(v) + f(0), the same shifted to be ≥ 0 and
  computed without cancellation (the loss sums it over the whole vocabulary);
- `curvature(g)` = (f*)″ at the v where (f*)′(v) = g, written in g (the Jacobian of the f-softargmax);
- optionally `affine` = (a, b) and an in-place `ratio_of_affine_(z)` with (f*)′(max(v, f′(0))) =
  ratio_of_affine_(a·v + b): the bisection then precomputes a·θ̃ + b once and spends fewer passes per halving
  (KL, α, χ²; the others use the generic form);
- optionally `conjugate_linear` = (c0, c1) with f*(v) + f(0) = g·(c0 + c1·v) wherever g = (f*)′(v) > 0
  (KL: (1, 0); α: (1/α, (α−1)/α), from g^{α−1} = 1 + (α−1)v; χ²: (1, ½)): the loss against a class index
  then sums Σ_j q_j (f*(v_j) + f(0)) as mass·(c0 + c1·(⟨p, θ̃⟩ − τ)) in one pass.

`divergence(name, alpha=...)` (a name of `NAMES`) returns an entry; an unknown name or a bad α raises a
`ValueError` naming the key.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from stages.methods.losses.config import check_divergence

TensorFn = Callable[[Tensor], Tensor]
LOG2 = math.log(2.0)


@dataclass(frozen=True)
class FDivergence:
    """One generator f of an f-divergence and everything Algorithm 1 and the loss read from it."""

    name: str
    f: TensorFn
    f_prime: TensorFn
    f_prime_zero: float
    fstar_prime: TensorFn
    fstar: TensorFn
    fstar_plus_f0: TensorFn
    curvature: TensorFn
    f_zero: float
    affine: tuple[float, float] | None = None
    ratio_of_affine_: TensorFn | None = None
    conjugate_linear: tuple[float, float] | None = None

    @property
    def sparse(self) -> bool:
        """Whether the f-softargmax can output exact zeros: f′(0) finite."""
        return math.isfinite(self.f_prime_zero)


def _kl() -> FDivergence:
    """KL: f(u) = u log u − u + 1; (f*)′ = exp, so p = softmax(θ + log q)."""
    return FDivergence(
        name="kl",
        f=lambda u: torch.special.xlogy(u, u) - u + 1,
        f_prime=torch.log,
        f_prime_zero=-math.inf,
        fstar_prime=torch.exp,
        fstar=lambda v: torch.expm1(v),
        fstar_plus_f0=torch.exp,
        curvature=torch.clone,
        f_zero=1.0,
        affine=(1.0, 0.0),
        ratio_of_affine_=torch.Tensor.exp_,
        conjugate_linear=(1.0, 0.0),
    )


def _alpha(alpha: float) -> FDivergence:
    """α-divergence: f(u) = (u^α − 1 − α(u − 1)) / (α(α − 1)), (f*)′(v) = [1 + (α − 1)v]_+^{1/(α−1)}.

    f*(v) = (g^α − 1)/α and f(0) = 1/α, so f*(v) + f(0) = g^α/α; (f*)″ = g^{2−α}. f′(0) = −1/(α − 1) for
    α > 1 (sparse), −∞ for α < 1; α = 1 is KL.
    """
    if alpha == 1.0:
        return _kl()
    a1 = alpha - 1.0

    def g(v: Tensor) -> Tensor:
        return torch.clamp(1 + a1 * v, min=0.0) ** (1.0 / a1)

    return FDivergence(
        name=f"alpha={alpha:g}",
        f=lambda u: (u**alpha - 1 - alpha * (u - 1)) / (alpha * a1),
        f_prime=lambda u: (u**a1 - 1) / a1,
        f_prime_zero=-1.0 / a1 if alpha > 1 else -math.inf,
        fstar_prime=g,
        fstar=lambda v: (g(v) ** alpha - 1) / alpha,
        fstar_plus_f0=lambda v: g(v) ** alpha / alpha,
        curvature=lambda gv: gv ** (2.0 - alpha),
        f_zero=1.0 / alpha,
        affine=(a1, 1.0),
        ratio_of_affine_=(lambda z: z.clamp_(min=0.0).pow_(1.0 / a1))
        if alpha > 1
        else (lambda z: z.pow_(1.0 / a1)),
        conjugate_linear=(1.0 / alpha, a1 / alpha),
    )


def _reverse_kl() -> FDivergence:
    """Reverse KL: f(u) = −log u + u − 1, f′ = 1 − 1/u, (f*)′(v) = 1/(1 − v), f* = −log(1 − v); f(0) = +∞."""
    return FDivergence(
        name="reverse_kl",
        f=lambda u: -torch.log(u) + u - 1,
        f_prime=lambda u: 1 - 1 / u,
        f_prime_zero=-math.inf,
        fstar_prime=lambda v: 1 / (1 - v),
        fstar=lambda v: -torch.log1p(-v),
        fstar_plus_f0=lambda v: torch.full_like(v, math.inf),
        curvature=lambda g: g * g,
        f_zero=math.inf,
    )


def _chi2() -> FDivergence:
    """χ²: f(u) = (u − 1)², f′ = 2(u − 1), f′(0) = −2, (f*)′(v) = 1 + v/2, f* + f(0) = (1 + v/2)²."""
    return FDivergence(
        name="chi2",
        f=lambda u: (u - 1) ** 2,
        f_prime=lambda u: 2 * (u - 1),
        f_prime_zero=-2.0,
        fstar_prime=lambda v: torch.clamp(1 + v / 2, min=0.0),
        fstar=lambda v: v + v * v / 4,
        fstar_plus_f0=lambda v: torch.clamp(1 + v / 2, min=0.0) ** 2,
        curvature=lambda g: torch.full_like(g, 0.5),
        f_zero=1.0,
        affine=(0.5, 1.0),
        ratio_of_affine_=lambda z: z.clamp_(min=0.0),
        conjugate_linear=(1.0, 0.5),
    )


def _jensen_shannon() -> FDivergence:
    """Jensen–Shannon: f(u) = ½[u log u − (u + 1) log((u + 1)/2)], f′ = ½ log(2u/(u + 1)),
    (f*)′(v) = e^{2v}/(2 − e^{2v}) (v < ½ log 2), f*(v) = −½ log(2 − e^{2v}), f(0) = ½ log 2."""
    return FDivergence(
        name="js",
        f=lambda u: 0.5 * (torch.special.xlogy(u, u) - (u + 1) * torch.log((u + 1) / 2)),
        f_prime=lambda u: 0.5 * torch.log(2 * u / (u + 1)),
        f_prime_zero=-math.inf,
        fstar_prime=lambda v: torch.exp(2 * v) / (2 - torch.exp(2 * v)),
        fstar=lambda v: -0.5 * torch.log(2 - torch.exp(2 * v)),
        fstar_plus_f0=lambda v: -0.5 * torch.log1p(-0.5 * torch.exp(2 * v)),
        curvature=lambda g: 2 * g * (1 + g),
        f_zero=0.5 * LOG2,
    )


def _squared_hellinger() -> FDivergence:
    """Squared Hellinger: f(u) = (√u − 1)², f′ = 1 − 1/√u, (f*)′(v) = 1/(1 − v)², f*(v) = v/(1 − v), f(0) = 1."""
    return FDivergence(
        name="hellinger",
        f=lambda u: (torch.sqrt(u) - 1) ** 2,
        f_prime=lambda u: 1 - 1 / torch.sqrt(u),
        f_prime_zero=-math.inf,
        fstar_prime=lambda v: 1 / (1 - v) ** 2,
        fstar=lambda v: v / (1 - v),
        fstar_plus_f0=lambda v: 1 / (1 - v),
        curvature=lambda g: 2 * g**1.5,
        f_zero=1.0,
    )


GENERATORS: dict[str, Callable[[], FDivergence]] = {
    "kl": _kl,
    "reverse_kl": _reverse_kl,
    "chi2": _chi2,
    "js": _jensen_shannon,
    "hellinger": _squared_hellinger,
}


def divergence(name: str, alpha: float | None = None, key: str = "divergence") -> FDivergence:
    """The table entry of `name` (one of :data:`NAMES`); `alpha` (> 0) is required for and only for `alpha`.

    Errors name the key: `divergence: unknown f 'x'`, `alpha: ... alpha > 0`.
    """
    check_divergence(name, alpha, key)
    return _alpha(float(alpha)) if name == "alpha" else GENERATORS[name]()
