"""Monomials (terms) as exponent vectors: degree-lexicographic order, the border of an order ideal, and batched
evaluation on points (NumPy or torch).

A term x₁^a₁ ⋯ xₙ^aₙ is the row (a₁, …, aₙ). Deglex (the order OAVI/ABM visit terms in): first by degree, then
by the exponent of the last variable, then the one before it, … (ascending), so degree 1 is x₁, x₂, …, xₙ and,
for n = 2, degree 2 is x₁², x₁x₂, x₂² (the convention of CGAVI's `deg_lex_sort`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import torch


def deglex_key(term: Sequence[int]) -> tuple[int, ...]:
    """Sort key of a term in deglex order (degree, then exponents from the last variable to the first)."""
    return (int(sum(term)), *(int(a) for a in reversed(term)))


def deglex_sorted(terms: Iterable[Sequence[int]]) -> list[tuple[int, ...]]:
    """Distinct terms in deglex order."""
    return sorted({tuple(int(a) for a in term) for term in terms}, key=deglex_key)


def border(order_ideal: Iterable[Sequence[int]], degree: int, n_variables: int) -> list[tuple[int, ...]]:
    """The degree-`degree` border terms of an order ideal O (given by its terms of degree < `degree`): every term
    x_i·t (t ∈ O of degree − 1) all of whose degree − 1 divisors lie in O, in deglex order."""
    known = {tuple(int(a) for a in term) for term in order_ideal}
    previous = [term for term in known if sum(term) == degree - 1]
    candidates = set()
    for term in previous:
        for variable in range(n_variables):
            grown = list(term)
            grown[variable] += 1
            candidates.add(tuple(grown))
    return [term for term in deglex_sorted(candidates) if all(d in known for d in divisors(term))]


def divisors(term: Sequence[int]) -> list[tuple[int, ...]]:
    """The terms t / x_i of degree one less (one per variable dividing t)."""
    result = []
    for variable, exponent in enumerate(term):
        if exponent > 0:
            lower = list(term)
            lower[variable] -= 1
            result.append(tuple(lower))
    return result


def all_terms(n_variables: int, max_degree: int) -> list[tuple[int, ...]]:
    """Every term of degree ≤ `max_degree` in `n_variables` variables, deglex order (the constant first)."""
    terms: list[tuple[int, ...]] = [tuple([0] * n_variables)]
    for degree in range(1, max_degree + 1):
        terms += border(terms, degree, n_variables)
    return terms


def evaluation_plan(terms: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """How to evaluate `terms` (closed under division, deglex order) by one multiplication each: for every term
    its parent's index and the variable it multiplies (the constant: parent −1). Returns (parent, variable,
    degree) arrays; terms not closed under division raise ValueError."""
    index = {tuple(int(a) for a in term): position for position, term in enumerate(terms)}
    parents, variables, degrees = [], [], []
    for term in index:
        degree = sum(term)
        degrees.append(degree)
        if degree == 0:
            parents.append(-1)
            variables.append(-1)
            continue
        variable = max(v for v, a in enumerate(term) if a > 0)
        lower = list(term)
        lower[variable] -= 1
        parent = index.get(tuple(lower))
        if parent is None:
            raise ValueError(
                f"term {term}: its divisor {tuple(lower)} is not in the list (not closed under division)"
            )
        parents.append(parent)
        variables.append(variable)
    return np.array(parents), np.array(variables), np.array(degrees)


def evaluate_numpy(terms: Sequence[Sequence[int]], points: np.ndarray) -> np.ndarray:
    """Values of every term on every point: (m, T) float64 (terms need not be closed under division): the
    closure is evaluated one multiplication per term, then the asked columns are picked."""
    wanted = [tuple(int(a) for a in term) for term in terms]
    full = closure(wanted)
    parents, variables, _ = evaluation_plan(full)
    points = np.asarray(points, dtype=np.float64)
    values = np.empty((len(points), len(full)))
    for column, (parent, variable) in enumerate(zip(parents, variables, strict=True)):
        values[:, column] = 1.0 if parent < 0 else values[:, parent] * points[:, variable]
    index = {term: position for position, term in enumerate(full)}
    return values[:, [index[term] for term in wanted]]


def closure(terms: Iterable[Sequence[int]]) -> list[tuple[int, ...]]:
    """The smallest set closed under division that contains `terms`, in deglex order."""
    result: set[tuple[int, ...]] = set()
    stack = [tuple(int(a) for a in term) for term in terms]
    while stack:
        term = stack.pop()
        if term in result:
            continue
        result.add(term)
        stack += divisors(term)
        if sum(term) > 0:
            result.add(tuple([0] * len(term)))
    return deglex_sorted(result)


class MonomialEvaluator(torch.nn.Module):
    """Evaluates a fixed list of terms (closed under division) on a batch, one gather-and-multiply per degree."""

    def __init__(self, terms: Sequence[Sequence[int]]) -> None:
        super().__init__()
        parents, variables, degrees = evaluation_plan(terms)
        self.n_terms = len(parents)
        self.levels: list[tuple[int, int]] = []
        order = np.argsort(degrees, kind="stable")
        if not np.array_equal(order, np.arange(len(degrees))):
            raise ValueError("terms must be sorted by degree (deglex order)")
        for degree in range(1, int(degrees.max(initial=0)) + 1):
            rows = np.flatnonzero(degrees == degree)
            self.levels.append((int(rows[0]), int(rows[-1]) + 1))
        self.register_buffer("parents", torch.as_tensor(np.maximum(parents, 0), dtype=torch.long))
        self.register_buffer("variables", torch.as_tensor(np.maximum(variables, 0), dtype=torch.long))

    def forward(self, points: torch.Tensor) -> torch.Tensor:
        """(B, n) points → (B, T) term values."""
        values = torch.empty(points.shape[0], self.n_terms, dtype=points.dtype, device=points.device)
        values[:, 0] = 1.0
        for start, stop in self.levels:
            values[:, start:stop] = (
                values[:, self.parents[start:stop]] * points[:, self.variables[start:stop]]
            )
        return values
