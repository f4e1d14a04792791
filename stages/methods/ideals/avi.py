"""Approximate vanishing ideals of a point set: OAVI (Frank–Wolfe over the L1 ball) and ABM (smallest singular
vector), both visiting border terms degree by degree in deglex order.

Both build an order ideal O (terms that do not vanish) and a set G of generators. At degree d, for every border
term u of O (deglex), the oracle looks for coefficients c over the current O such that p = u + Σ c_t t (OAVI) or
p = v_u u + Σ v_t t with ‖v‖₂ = 1 (ABM) has mean p(x)² ≤ ψ on the points; if so p joins G, else u joins O.

- OAVI (Wirth & Pokutta): min (1/m)‖A c + u‖² s.t. ‖c‖₁ ≤ τ − 1, vanilla Frank–Wolfe (conditional gradients)
  with exact line search from c = 0; it stops when the loss is ≤ ψ, when loss − gap > ψ (no ψ-vanishing
  polynomial exists in the ball), when the gap is < ε·ψ, when an iteration improves the loss by < tol·ψ, or
  after `max_iterations` (CGAVI's rules). Its generators are sparse (a few vertices of the ball).
- ABM (Limbeck's approximate Buchberger–Möller): the smallest eigenpair of the Gram matrix (1/m)[A u]ᵀ[A u]:
  loss = the eigenvalue, p = the unit eigenvector (sign: leading coefficient ≥ 0).

Gram matrices are kept incrementally (float64), so each border term costs one product with the data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import scipy.linalg

from stages.methods.ideals.terms import border

Oracle = Literal["abm", "oavi"]


@dataclass(frozen=True)
class AVIOptions:
    """ψ, the degree cap and the oracle; OAVI's ball radius τ, accuracy ε, tolerance and iteration cap."""

    psi: float = 0.005
    max_degree: int = 3
    oracle: Oracle = "abm"
    tau: float = 1000.0
    eps: float = 0.001
    tol: float = 1e-6
    max_iterations: int = 1000

    def __post_init__(self) -> None:
        if not self.psi > 0:
            raise ValueError(f"psi must be > 0, got {self.psi}")
        if self.max_degree < 1:
            raise ValueError(f"max_degree must be ≥ 1, got {self.max_degree}")
        if self.oracle not in ("abm", "oavi"):
            raise ValueError(f"oracle must be 'abm' or 'oavi', got {self.oracle!r}")
        if not self.tau > 1:
            raise ValueError(f"tau must be > 1, got {self.tau}")


@dataclass
class Generator:
    """One approximately vanishing polynomial: its terms (the O terms when found, then its leading term) and
    coefficients, its degree and its mean squared value on the fitting points."""

    terms: list[tuple[int, ...]]
    coefficients: np.ndarray
    loss: float

    @property
    def degree(self) -> int:
        return int(sum(self.terms[-1]))

    @property
    def leading_term(self) -> tuple[int, ...]:
        return self.terms[-1]

    def nonzero(self, atol: float = 0.0) -> int:
        """Number of coefficients with |c| > atol."""
        return int(np.count_nonzero(np.abs(self.coefficients) > atol))


@dataclass
class IdealFit:
    """The result of one fit: the order ideal O (deglex) and the generators G (in the order found)."""

    order_ideal: list[tuple[int, ...]]
    generators: list[Generator] = field(default_factory=list)
    n_points: int = 0


def _frank_wolfe(
    gram: np.ndarray, cross: np.ndarray, target: float, options: AVIOptions
) -> tuple[np.ndarray, float]:
    """min f(c) = cᵀ G c + 2 bᵀ c + s (G = AᵀA/m, b = Aᵀu/m, s = uᵀu/m) over the L1 ball of radius τ − 1."""
    radius = options.tau - 1
    c = np.zeros(len(cross))
    gc = np.zeros(len(cross))
    loss = target
    psi = options.psi
    for _ in range(options.max_iterations):
        gradient = 2 * (gc + cross)
        index = int(np.argmax(np.abs(gradient)))
        vertex_value = -radius * np.sign(gradient[index]) if gradient[index] != 0 else 0.0
        gap = float(gradient @ c - gradient[index] * vertex_value)
        if loss <= psi or gap < options.eps * psi or loss - gap > psi:
            break
        direction = -c.copy()
        direction[index] += vertex_value
        g_direction = -gc + vertex_value * gram[:, index]
        curvature = float(direction @ g_direction)
        if curvature <= 0:
            break
        step = min(float(-(gradient @ direction) / (2 * curvature)), 1.0)
        if step <= 0:
            break
        c += step * direction
        gc += step * g_direction
        new_loss = float(c @ gc + 2 * cross @ c + target)
        improved = loss - new_loss
        loss = new_loss
        if improved < options.tol * psi:
            break
    return c, max(loss, 0.0)


def _abm(gram: np.ndarray, cross: np.ndarray, target: float) -> tuple[np.ndarray, float]:
    """Smallest eigenpair of the bordered Gram matrix [[G, b], [bᵀ, s]]: (unit vector over O + u, eigenvalue)."""
    full = np.empty((len(cross) + 1, len(cross) + 1))
    full[:-1, :-1], full[:-1, -1], full[-1, :-1], full[-1, -1] = gram, cross, cross, target
    values, vectors = scipy.linalg.eigh(full, subset_by_index=[0, 0], driver="evx")
    vector = vectors[:, 0]
    if vector[-1] < 0:
        vector = -vector
    return vector, max(float(values[0]), 0.0)


def fit_ideal(points: np.ndarray, options: AVIOptions) -> IdealFit:
    """OAVI or ABM on `points` (m, n), best in [−1, 1]ⁿ: degree by degree up to `max_degree` or until a degree
    adds no term to O, border terms in deglex order."""
    points = np.asarray(points, dtype=np.float64)
    if points.ndim != 2 or len(points) < 1:
        raise ValueError(f"points must be a non-empty (m, n) array, got shape {points.shape}")
    if not np.isfinite(points).all():
        raise ValueError("points hold NaN or infinite values")
    m, n = points.shape
    constant = tuple([0] * n)
    order: list[tuple[int, ...]] = [constant]
    values = {constant: np.ones(m)}
    evaluations = np.ones((m, 1))
    gram = np.ones((1, 1))
    result = IdealFit(order_ideal=order, n_points=m)
    for degree in range(1, options.max_degree + 1):
        added = False
        for term in border(order, degree, n):
            variable = max(v for v, a in enumerate(term) if a > 0)
            parent = list(term)
            parent[variable] -= 1
            column = values[tuple(parent)] * points[:, variable]
            cross = evaluations.T @ column / m
            target = float(column @ column / m)
            if options.oracle == "oavi":
                c, loss = _frank_wolfe(gram, cross, target, options)
                coefficients = np.append(c, 1.0)
            else:
                coefficients, loss = _abm(gram, cross, target)
            if loss <= options.psi:
                result.generators.append(Generator([*order, term], coefficients, loss))
                continue
            order.append(term)
            values[term] = column
            evaluations = np.column_stack([evaluations, column])
            gram = np.block([[gram, cross[:, None]], [cross[None, :], np.array([[target]])]])
            added = True
        if not added:
            break
    return result
