"""Generators per class → one polynomial layer G(z) = (|p₁¹(z)|, …, |p_k^K(z)|), the pruning score, and the
random-monomial layer of the same size (the baseline).

The pruning score of a generator p of class c is s(p) = min over other classes k of mean |p(z)| on class k's
points: a high score means p vanishes on its own class and on no other. Per class the `keep` highest-score
generators are kept (ties: fewer non-zero coefficients first, then the order found); monomials that no kept
generator uses are dropped. Each kept generator is divided by its score so that its mean |p| on the nearest other
class is 1 (same vanishing set; the features start on one scale for the linear head).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from stages.methods.ideals.avi import Generator
from stages.methods.ideals.terms import MonomialEvaluator, all_terms, closure, deglex_sorted, evaluate_numpy


def generator_values(generator: Generator, points: np.ndarray) -> np.ndarray:
    """p(x) on every point (float64)."""
    return evaluate_numpy(generator.terms, points) @ generator.coefficients


def generators_matrix(generators: Sequence[Generator]) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """The terms any of `generators` uses (deglex) and their (T, G) coefficient matrix."""
    terms = deglex_sorted(term for generator in generators for term in generator.terms)
    index = {term: position for position, term in enumerate(terms)}
    matrix = np.zeros((len(terms), len(generators)))
    for column, generator in enumerate(generators):
        for term, value in zip(generator.terms, generator.coefficients, strict=True):
            matrix[index[tuple(term)], column] += value
    return terms, matrix


def pruning_scores(
    generators: Sequence[Generator],
    own: int,
    points_by_class: Mapping[int, np.ndarray],
    evaluated: Mapping[int, tuple[Sequence[tuple[int, ...]], np.ndarray]] | None = None,
) -> np.ndarray:
    """s(p) = min over classes k ≠ `own` of mean |p(z^k)| for every generator (inf when there is no other class).
    `evaluated`: per class, terms and their values on its points, computed once (any superset of the terms)."""
    scores = np.full(len(generators), np.inf)
    if not generators:
        return scores
    terms, matrix = generators_matrix(generators)
    for label, points in points_by_class.items():
        if label == own or len(points) == 0:
            continue
        if evaluated is not None and label in evaluated:
            known, values = evaluated[label]
            index = {term: position for position, term in enumerate(known)}
            monomials = values[:, [index[term] for term in terms]]
        else:
            monomials = evaluate_numpy(terms, points)
        scores = np.minimum(scores, np.abs(monomials @ matrix).mean(axis=0))
    return scores


@dataclass
class KeptGenerator:
    """A generator kept for the layer: its class, its score and the generator itself (unscaled)."""

    label: int
    score: float
    generator: Generator


def select_generators(
    generators_by_class: Mapping[int, Sequence[Generator]],
    points_by_class: Mapping[int, np.ndarray],
    keep: int,
) -> list[KeptGenerator]:
    """Per class the `keep` generators with the highest s(p) (ties: sparser first), classes in label order."""
    kept: list[KeptGenerator] = []
    union = closure(
        term for generators in generators_by_class.values() for g in generators for term in g.terms
    )
    evaluated = {label: (union, evaluate_numpy(union, points)) for label, points in points_by_class.items()}
    for label in sorted(generators_by_class):
        generators = list(generators_by_class[label])
        if not generators:
            continue
        scores = pruning_scores(generators, label, points_by_class, evaluated)
        order = sorted(range(len(generators)), key=lambda i: (-scores[i], generators[i].nonzero(), i))
        kept += [KeptGenerator(label, float(scores[i]), generators[i]) for i in order[:keep]]
    return kept


def coefficient_matrix(kept: Sequence[KeptGenerator]) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """The terms the kept generators use (closed under division, deglex) and their (T, P) coefficient matrix,
    each column divided by its generator's score (finite and > 0)."""
    if not kept:
        raise ValueError("no generators to build a layer from")
    used = [
        term
        for item in kept
        for term, value in zip(item.generator.terms, item.generator.coefficients, strict=True)
        if value != 0
    ]
    terms = closure(used)
    index = {term: position for position, term in enumerate(terms)}
    matrix = np.zeros((len(terms), len(kept)))
    for column, item in enumerate(kept):
        scale = item.score if np.isfinite(item.score) and item.score > 0 else 1.0
        for term, value in zip(item.generator.terms, item.generator.coefficients, strict=True):
            if value != 0:
                matrix[index[term], column] = value / scale
    return terms, matrix


class PolynomialLayer(nn.Module):
    """z ↦ |M(z) C|: monomial values M(z) (B, T) times a trainable coefficient matrix C (T, P), absolute value.

    Coefficients that start at zero stay zero (a fixed mask), so fine-tuning keeps each generator's support and
    the parameter count is the number of non-zero coefficients."""

    def __init__(
        self, terms: Sequence[Sequence[int]], coefficients: np.ndarray, absolute: bool = True
    ) -> None:
        super().__init__()
        self.terms = [tuple(int(a) for a in term) for term in terms]
        self.monomials = MonomialEvaluator(self.terms)
        matrix = torch.as_tensor(np.asarray(coefficients), dtype=torch.float32)
        self.coefficients = nn.Parameter(matrix.clone())
        self.register_buffer("mask", (matrix != 0).to(torch.float32))
        self.absolute = absolute

    @property
    def n_outputs(self) -> int:
        return int(self.coefficients.shape[1])

    def nonzero_coefficients(self) -> int:
        """Non-zero entries of C (the layer's parameter count)."""
        return int(self.mask.sum().item())

    def from_monomials(self, monomials: torch.Tensor) -> torch.Tensor:
        """G from precomputed monomial values M(z) (B, T) (training on fixed z evaluates M once)."""
        values = monomials @ (self.coefficients * self.mask)
        return values.abs() if self.absolute else values

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.from_monomials(self.monomials(z))


def random_monomial_layer(n_variables: int, count: int, max_degree: int, seed: int) -> PolynomialLayer:
    """`count` distinct random non-constant monomials of degree ≤ `max_degree` (uniform over the terms), each a
    feature with coefficient 1 (raw value, sign kept): the baseline with as many features as VI-Net."""
    candidates = all_terms(n_variables, max_degree)[1:]
    if count > len(candidates):
        raise ValueError(f"{count} random monomials asked, only {len(candidates)} exist")
    rng = np.random.default_rng(seed)
    chosen = [candidates[i] for i in sorted(rng.choice(len(candidates), size=count, replace=False))]
    terms = closure(chosen)
    index = {term: position for position, term in enumerate(terms)}
    matrix = np.zeros((len(terms), count))
    for column, term in enumerate(chosen):
        matrix[index[term], column] = 1.0
    return PolynomialLayer(terms, matrix, absolute=False)
