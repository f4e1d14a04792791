"""Optimal experimental design on a finite set of arms, by Frank–Wolfe with away steps.

Maximises the (ridge-regularised) D-criterion f(π) = log det A(π), A(π) = Σ_x π_x x xᵀ + λI, over the simplex.
Its gradient is g_x(π) = ‖x‖²_{A(π)⁻¹}, the variance an arm has under the design, so the Frank–Wolfe duality
gap max_x g_x − Σ_y π_y g_y bounds f(π*) − f(π) and is the stopping test (`tol`).

G-optimality follows: Σ_y π_y g_y = d − λ tr A(π)⁻¹ ≤ d, so at gap ≤ tol the design's maximal variance is
at most d + tol; at λ = 0 the Kiefer–Wolfowitz theorem makes it exactly d at the optimum (D = G optimality).
With λ > 0 the regularised G-criterion min_π max_x ‖x‖²_{A(π)⁻¹} is solved through this D-surrogate, whose
maximal variance is within tol of its own weighted mean and at most d + tol.

Each step moves toward the arm of largest variance (Frank–Wolfe) or away from the supported arm of smallest
variance (away step, which can drop an arm to zero weight), whichever has the larger gap, with an exact line
search on log det: for a step A + γD, d/dγ log det = Σ_j μ_j / (1 + γμ_j), μ the eigenvalues of
C^{-1/2} D C^{-1/2}. The start is uniform on d arms chosen by pivoted QR (a spanning set), so the support
stays small. Rank-deficient arm sets at λ = 0 are solved in the span of the arms (the maximal variance is
then their rank).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import qr

LINE_SEARCH_POINTS = 33
LINE_SEARCH_ROUNDS = 4


@dataclass(frozen=True)
class Design:
    """A design π over the arms and how well it solves the problem."""

    weights: np.ndarray
    max_variance: float
    gap: float
    iterations: int
    converged: bool

    @property
    def support(self) -> np.ndarray:
        """Indices of arms with positive weight."""
        return np.flatnonzero(self.weights > 0)


def _span_basis(arms: np.ndarray) -> np.ndarray:
    """Coordinates of the arms in an orthonormal basis of their span (rank × columns)."""
    _, singular, vt = np.linalg.svd(arms, full_matrices=False)
    rank = (
        int((singular > singular.max() * max(arms.shape) * np.finfo(float).eps).sum()) if singular.size else 0
    )
    return arms @ vt[: max(rank, 1)].T


def _initial_weights(arms: np.ndarray) -> np.ndarray:
    """Uniform weights on a spanning subset chosen by pivoted QR of Xᵀ."""
    _, _, pivots = qr(arms.T, pivoting=True, mode="economic")
    chosen = pivots[: min(arms.shape[1], arms.shape[0])]
    weights = np.zeros(arms.shape[0])
    weights[chosen] = 1.0 / len(chosen)
    return weights


def _variances(
    arms: np.ndarray, weights: np.ndarray, reg: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """M = Σ π x xᵀ, the Cholesky factor of C = M + λI, and every arm's variance ‖x‖²_{C⁻¹}."""
    support = weights > 0
    moment = (arms[support].T * weights[support]) @ arms[support]
    factor = np.linalg.cholesky(moment + reg * np.eye(arms.shape[1]))
    solved = np.linalg.solve(factor, arms.T)
    return moment, factor, np.einsum("ij,ij->j", solved, solved)


def _slopes(eigen: np.ndarray, gammas: np.ndarray) -> np.ndarray:
    """d/dγ log det(C + γD) = Σ_j μ_j / (1 + γμ_j) at each γ (−∞ where C + γD is singular)."""
    denominators = 1.0 + np.outer(gammas, eigen)
    with np.errstate(divide="ignore", invalid="ignore"):
        slopes = (eigen / denominators).sum(axis=1)
    return np.where((denominators > 1e-12).all(axis=1), slopes, -np.inf)


def _step_size(factor: np.ndarray, direction: np.ndarray, largest: float) -> float:
    """argmax over γ ∈ [0, largest] of log det(C + γD) (C = LLᵀ): the root of the decreasing slope, found
    on successively finer grids (relative precision 32⁻⁴ of the interval)."""
    half = np.linalg.solve(factor, np.linalg.solve(factor, direction).T)
    eigen = np.linalg.eigvalsh((half + half.T) / 2)
    if _slopes(eigen, np.array([largest]))[0] >= 0:
        return largest
    low, high = 0.0, largest
    for _ in range(LINE_SEARCH_ROUNDS):
        grid = np.linspace(low, high, LINE_SEARCH_POINTS)
        positive = np.flatnonzero(_slopes(eigen, grid) > 0)
        last = int(positive[-1]) if len(positive) else 0
        low, high = grid[last], grid[min(last + 1, LINE_SEARCH_POINTS - 1)]
    return float(low)


def optimal_design(arms: np.ndarray, reg: float = 0.0, tol: float = 1e-3, max_iter: int = 100_000) -> Design:
    """D-/G-optimal design over the rows of `arms` (K × d), ridge `reg` ≥ 0 in the information matrix.

    Stops when the duality gap max_x g_x − Σ π g ≤ `tol` (absolute, in variance units) or after `max_iter`
    steps (then `converged` is False). Returns the weights, the maximal variance max_x ‖x‖²_{A(π)⁻¹}, the gap.
    """
    arms = np.asarray(arms, dtype=np.float64)
    if arms.ndim != 2 or arms.shape[0] < 1:
        raise ValueError(f"arms must be a non-empty K × d matrix, got shape {arms.shape}")
    if reg < 0 or tol <= 0:
        raise ValueError(f"reg must be ≥ 0 and tol > 0 (got reg={reg}, tol={tol})")
    if reg == 0:
        arms = _span_basis(arms)
    weights = _initial_weights(arms)
    gap, iteration = np.inf, 0
    for iteration in range(max_iter + 1):
        moment, factor, variance = _variances(arms, weights, reg)
        mean = float(weights @ variance)
        toward = int(np.argmax(variance))
        gap = float(variance[toward] - mean)
        if gap <= tol or iteration == max_iter:
            break
        support = np.flatnonzero(weights > 0)
        away = int(support[np.argmin(variance[support])])
        if gap >= mean - variance[away] or weights[away] >= 1.0:
            direction = np.outer(arms[toward], arms[toward]) - moment
            gamma = _step_size(factor, direction, 1.0)
            weights = (1 - gamma) * weights
            weights[toward] += gamma
        else:
            largest = weights[away] / (1.0 - weights[away])
            direction = moment - np.outer(arms[away], arms[away])
            gamma = _step_size(factor, direction, largest)
            weights = (1 + gamma) * weights
            weights[away] = 0.0 if gamma >= largest else weights[away] - gamma
        weights[weights < 1e-15] = 0.0
        weights /= weights.sum()
    _, _, variance = _variances(arms, weights, reg)
    return Design(weights, float(variance.max()), gap, iteration, gap <= tol)


def round_allocation(weights: np.ndarray, n_pulls: int) -> np.ndarray:
    """Integer pulls per arm summing to exactly `n_pulls`: ⌈n π_x⌉ on the support, the excess taken one pull
    at a time from the arms with the most pulls (so every supported arm keeps ≥ ⌈n π_x⌉ − 1)."""
    counts = np.where(weights > 0, np.ceil(n_pulls * weights - 1e-9), 0).astype(np.int64)
    excess = int(counts.sum()) - n_pulls
    while excess > 0:
        order = np.argsort(-counts, kind="stable")[:excess]
        order = order[counts[order] > 0]
        counts[order] -= 1
        excess -= len(order)
    if excess < 0:
        counts[int(np.argmax(weights))] -= excess
    return counts
