"""Closed-form sharpness of the minimalist model f(x) = (xᵀu)·∏_{i=1}^{D−1} v_i (Yoo, Song, Yun; ICML 2025).

Training loss L = (1/2N)‖X u ∏v − y‖² over u ∈ R^d and the D−1 scalars v_i (depth D counts u). With the SVD
X = Σ σ_i e_i w_iᵀ and d_i = e_iᵀy:

- dataset difficulty Q = Σ d_i²/σ_i² = ‖X⁺y‖² (the squared norm of the minimum-norm interpolator);
- at a balanced global minimum (‖u‖ = |v_i| = c, c^{2D} = Q) the Hessian is JᵀJ/N with
  JJᵀ = Q^{(D−1)/D} XXᵀ + (D−1) Q^{−1/D} ŷŷᵀ (ŷ the projection of y on X's column space), so
  [σ₁²Q^{(D−1)/D} + (D−1)d₁²Q^{−1/D}]/N ≤ S ≤ [σ₁²Q^{(D−1)/D} + (D−1)‖ŷ‖²Q^{−1/D}]/N;
- predicted sharpness Ŝ_D = σ₁²Q^{(D−1)/D}/N (the first term of both bounds);
- depth D = 2 with imbalance C = ‖Π_W u‖² − v₁² (conserved by gradient flow): v₁*² = (√(C² + 4Q) − C)/2.

Everything here is numpy and exact up to round-off; the tests check it against Hessians built by autograd.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

RANK_TOL = 1e-10
"""Singular values below RANK_TOL·σ₁ count as zero (X⁺ ignores them)."""


def check_depth(depth: int, key: str = "depth") -> int:
    """Depth D ≥ 1 (D = 1 is linear regression in u alone); the error names `key`."""
    if isinstance(depth, bool) or not isinstance(depth, int | np.integer) or depth < 1:
        raise ValueError(f"{key} = {depth!r}: the depth D must be an integer ≥ 1")
    return int(depth)


def check_step_size(eta: float, key: str = "eta") -> float:
    """Step size η > 0 (finite); the error names `key`."""
    if not math.isfinite(float(eta)) or eta <= 0:
        raise ValueError(f"{key} = {eta!r}: the step size η must be a finite number > 0")
    return float(eta)


def check_batch_size(batch_size: int, n: int, key: str = "batch_size") -> int:
    """1 ≤ B ≤ N; the error names `key`."""
    if batch_size < 1 or batch_size > n:
        raise ValueError(f"{key} = {batch_size}: the batch size B must lie in [1, N] with N = {n}")
    return int(batch_size)


def stability_threshold(eta: float) -> float:
    """2/η: GD on a quadratic of curvature above it diverges (the edge of stability)."""
    return 2.0 / check_step_size(eta)


@dataclass(frozen=True)
class Spectrum:
    """What the closed form needs from (X, y): σ_i, d_i = e_iᵀy (non-zero σ only), N and ‖y‖²."""

    sigma: np.ndarray
    d: np.ndarray
    n: int
    y_norm2: float

    @property
    def difficulty(self) -> float:
        """Q = Σ d_i²/σ_i² = ‖X⁺y‖²."""
        return float(np.sum(self.d**2 / self.sigma**2))

    @property
    def fitted_norm2(self) -> float:
        """‖ŷ‖² = Σ d_i², the part of ‖y‖² in X's column space (= ‖y‖² when X has rank N)."""
        return float(np.sum(self.d**2))


def spectrum(x: np.ndarray, y: np.ndarray) -> Spectrum:
    """SVD summary of a design matrix X (N × d) and targets y (N)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64).reshape(-1)
    if x.ndim != 2 or x.shape[0] != y.shape[0] or x.shape[0] == 0:
        raise ValueError(f"X must be N × d and y of length N; got X {x.shape}, y {y.shape}")
    left, sigma, _ = np.linalg.svd(x, full_matrices=False)
    keep = sigma > RANK_TOL * sigma[0]
    if not keep.any():
        raise ValueError("X is zero: the closed form needs at least one non-zero singular value")
    return Spectrum(sigma[keep], left[:, keep].T @ y, x.shape[0], float(y @ y))


def dataset_difficulty(x: np.ndarray, y: np.ndarray) -> float:
    """Q = ‖X⁺y‖²."""
    return spectrum(x, y).difficulty


@dataclass(frozen=True)
class SharpnessBounds:
    """Ŝ_D and the bounds on the sharpness at a balanced global minimum, with the quantities they use."""

    depth: int
    n: int
    difficulty: float
    sigma1: float
    d1: float
    fitted_norm2: float
    predicted: float
    lower: float
    upper: float

    def contains(self, value: float, rel_tol: float = 0.0) -> bool:
        """Whether `value` lies in [lower, upper], each end widened by `rel_tol` of itself."""
        return self.lower * (1 - rel_tol) <= value <= self.upper * (1 + rel_tol)

    def as_dict(self) -> dict[str, float]:
        """Plain numbers (for tables)."""
        return {key: float(value) for key, value in asdict(self).items()}


def sharpness_bounds(x: np.ndarray, y: np.ndarray, depth: int) -> SharpnessBounds:
    """Ŝ_D = σ₁²Q^{(D−1)/D}/N and the bounds [Ŝ_D + (D−1)d₁²Q^{−1/D}/N, Ŝ_D + (D−1)‖ŷ‖²Q^{−1/D}/N]."""
    return bounds_from_spectrum(spectrum(x, y), depth)


def bounds_from_spectrum(spec: Spectrum, depth: int) -> SharpnessBounds:
    """:func:`sharpness_bounds` from a precomputed :class:`Spectrum`."""
    depth = check_depth(depth)
    q = spec.difficulty
    sigma1, d1 = float(spec.sigma[0]), float(spec.d[0])
    predicted = sigma1**2 * q ** ((depth - 1) / depth) / spec.n
    extra = (depth - 1) * q ** (-1 / depth) / spec.n
    return SharpnessBounds(
        depth=depth,
        n=spec.n,
        difficulty=q,
        sigma1=sigma1,
        d1=d1,
        fitted_norm2=spec.fitted_norm2,
        predicted=predicted,
        lower=predicted + extra * d1**2,
        upper=predicted + extra * spec.fitted_norm2,
    )


def predicted_sharpness(x: np.ndarray, y: np.ndarray, depth: int) -> float:
    """Ŝ_D = σ₁²Q^{(D−1)/D}/N."""
    return sharpness_bounds(x, y, depth).predicted


def balanced_minimum(x: np.ndarray, y: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """The balanced global minimum (u, v): u = c·X⁺y/‖X⁺y‖, v_i = c, c = Q^{1/(2D)} (so u·∏v = X⁺y)."""
    depth = check_depth(depth)
    solution = np.linalg.pinv(np.asarray(x, dtype=np.float64), rcond=RANK_TOL) @ np.asarray(y, np.float64)
    q = float(solution @ solution)
    if q == 0:
        raise ValueError("y is orthogonal to X's column space: the only interpolator is u = 0")
    scale = q ** (1 / (2 * depth))
    return solution * scale / math.sqrt(q), np.full(depth - 1, scale)


def balanced_minimum_sharpness(x: np.ndarray, y: np.ndarray, depth: int) -> float:
    """The exact sharpness at the balanced global minimum: λ_max(Q^{(D−1)/D}XXᵀ + (D−1)Q^{−1/D}ŷŷᵀ)/N."""
    depth = check_depth(depth)
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    q = dataset_difficulty(x, y)
    fitted = x @ np.linalg.pinv(x, rcond=RANK_TOL) @ y
    gram = q ** ((depth - 1) / depth) * x @ x.T + (depth - 1) * q ** (-1 / depth) * np.outer(fitted, fitted)
    return float(np.linalg.eigvalsh(gram)[-1] / x.shape[0])


def two_layer_minimum_v2(difficulty: float, imbalance: float) -> float:
    """D = 2: v₁*² = (√(C² + 4Q) − C)/2 at the global minimum reached with imbalance C."""
    return (math.sqrt(imbalance**2 + 4 * difficulty) - imbalance) / 2
