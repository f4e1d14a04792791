"""Hand-entered Feynman formulas (public AI Feynman equations and sampling ranges) and the LSR-Transform
generator: pivot an input into the target with sympy `solve`, keep analytic solutions, restrict the original
samples to the new form's valid domain, keep forms whose node count lies within the originals' range.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy

from stages.methods.equations.problem import Problem, evaluate_expression


@dataclass(frozen=True)
class Formula:
    """A Feynman equation `output = expression(inputs)` with each input's uniform sampling range."""

    name: str
    output: str
    expression: str
    ranges: dict[str, tuple[float, float]]
    descs: dict[str, str]


def _f(name, output, expression, ranges, descs) -> Formula:
    return Formula(name, output, expression, dict(ranges), dict(descs))


FORMULAS: tuple[Formula, ...] = (
    _f(
        "I.6.2a",
        "f",
        "exp(-theta**2/2)/sqrt(2*pi)",
        {"theta": (1, 3)},
        {"f": "probability density", "theta": "angle"},
    ),
    _f(
        "I.10.7",
        "m",
        "m_0/sqrt(1 - v**2/c**2)",
        {"m_0": (1, 5), "v": (1, 2), "c": (3, 10)},
        {"m": "relativistic mass", "m_0": "rest mass", "v": "velocity", "c": "speed of light"},
    ),
    _f(
        "I.12.2",
        "F",
        "q1*q2/(4*pi*epsilon*r**2)",
        {"q1": (1, 5), "q2": (1, 5), "epsilon": (1, 5), "r": (1, 5)},
        {
            "F": "electrostatic force",
            "q1": "charge 1",
            "q2": "charge 2",
            "epsilon": "permittivity",
            "r": "distance",
        },
    ),
    _f(
        "I.14.3",
        "U",
        "m*g*z",
        {"m": (1, 5), "g": (1, 5), "z": (1, 5)},
        {"U": "potential energy", "m": "mass", "g": "gravitational acceleration", "z": "height"},
    ),
    _f(
        "I.15.10",
        "p",
        "m_0*v/sqrt(1 - v**2/c**2)",
        {"m_0": (1, 5), "v": (1, 2), "c": (3, 10)},
        {"p": "relativistic momentum", "m_0": "rest mass", "v": "velocity", "c": "speed of light"},
    ),
    _f(
        "I.18.4",
        "r",
        "(m1*r1 + m2*r2)/(m1 + m2)",
        {"m1": (1, 5), "m2": (1, 5), "r1": (1, 5), "r2": (1, 5)},
        {"r": "centre of mass", "m1": "mass 1", "m2": "mass 2", "r1": "position 1", "r2": "position 2"},
    ),
    _f(
        "I.24.6",
        "E_n",
        "m*(omega**2 + omega_0**2)*x**2/4",
        {"m": (1, 3), "omega": (1, 3), "omega_0": (1, 3), "x": (1, 3)},
        {
            "E_n": "energy",
            "m": "mass",
            "omega": "angular frequency",
            "omega_0": "natural frequency",
            "x": "amplitude",
        },
    ),
    _f(
        "I.26.2",
        "theta1",
        "asin(n*sin(theta2))",
        {"n": (0, 1), "theta2": (1, 5)},
        {"theta1": "refraction angle", "n": "refractive index ratio", "theta2": "incidence angle"},
    ),
    _f(
        "I.29.4",
        "k",
        "omega/c",
        {"omega": (1, 10), "c": (1, 10)},
        {"k": "wave number", "omega": "angular frequency", "c": "speed of light"},
    ),
    _f(
        "I.34.8",
        "omega",
        "q*v*B/p",
        {"q": (1, 5), "v": (1, 5), "B": (1, 5), "p": (1, 5)},
        {
            "omega": "gyration frequency",
            "q": "charge",
            "v": "velocity",
            "B": "magnetic field",
            "p": "momentum",
        },
    ),
    _f(
        "I.37.4",
        "Int",
        "I1 + I2 + 2*sqrt(I1*I2)*cos(delta)",
        {"I1": (1, 5), "I2": (1, 5), "delta": (1, 5)},
        {"Int": "intensity", "I1": "intensity 1", "I2": "intensity 2", "delta": "phase difference"},
    ),
    _f(
        "I.39.10",
        "E_n",
        "3*pF*V/2",
        {"pF": (1, 5), "V": (1, 5)},
        {"E_n": "energy", "pF": "pressure", "V": "volume"},
    ),
    _f(
        "II.3.24",
        "h",
        "Pwr/(4*pi*r**2)",
        {"Pwr": (1, 5), "r": (1, 5)},
        {"h": "flux density", "Pwr": "power", "r": "distance"},
    ),
    _f(
        "II.27.18",
        "E_den",
        "epsilon*Ef**2",
        {"epsilon": (1, 5), "Ef": (1, 5)},
        {"E_den": "energy density", "epsilon": "permittivity", "Ef": "electric field"},
    ),
    _f(
        "II.38.14",
        "mu_S",
        "Y/(2*(1 + sigma))",
        {"Y": (1, 4), "sigma": (1, 4)},
        {"mu_S": "shear modulus", "Y": "Young's modulus", "sigma": "Poisson ratio"},
    ),
    _f(
        "III.4.33",
        "E_n",
        "hbar*omega/(exp(hbar*omega/(kb*T)) - 1)",
        {"hbar": (1, 5), "omega": (1, 5), "kb": (1, 5), "T": (1, 5)},
        {
            "E_n": "mean energy",
            "hbar": "reduced Planck constant",
            "omega": "angular frequency",
            "kb": "Boltzmann constant",
            "T": "temperature",
        },
    ),
)
"""Public Feynman equations (AI Feynman's list, typed by hand) with its sampling ranges."""


def complexity(expression: sympy.Expr) -> int:
    """Node count of the expression tree (sympy preorder traversal)."""
    return sum(1 for _ in sympy.preorder_traversal(expression))


def _uniform(ranges: dict[str, tuple[float, float]], n: int, rng: np.random.Generator) -> np.ndarray:
    return np.column_stack([rng.uniform(low, high, n) for low, high in ranges.values()])


def original_samples(formula: Formula, n: int, rng: np.random.Generator) -> np.ndarray:
    """n rows [y, inputs...] sampled uniformly in the ranges (rows where y is not real dropped)."""
    inputs = list(formula.ranges)
    X = _uniform(formula.ranges, n, rng)
    expression = sympy.sympify(formula.expression, locals=_locals(inputs))
    y = evaluate_expression(expression, inputs, X)
    keep = np.isfinite(y)
    return np.column_stack([y, X])[keep]


def _locals(names: list[str]) -> dict[str, sympy.Symbol]:
    return {name: sympy.Symbol(name, real=True) for name in names}


def original_problem(formula: Formula, rows: np.ndarray, n_train: int, n_test: int) -> Problem:
    """The Feynman equation itself as a problem (family `original`): first n_train rows train, next test."""
    symbols = [formula.output, *formula.ranges]
    return Problem(
        name=f"feynman_{formula.name}",
        symbols=symbols,
        symbol_descs=[formula.descs.get(name, name) for name in symbols],
        symbol_properties=["O"] + ["V"] * (len(symbols) - 1),
        expression=formula.expression,
        samples={"train": rows[:n_train], "test": rows[n_train : n_train + n_test]},
        family="original",
        description=f"Feynman {formula.name}: {formula.output} = {formula.expression}",
    )


def _analytic(solution: sympy.Expr) -> bool:
    forbidden = (sympy.RootOf, sympy.LambertW, sympy.Piecewise, sympy.Integral, sympy.Subs)
    return not solution.has(*forbidden) and not solution.has(sympy.I) and solution.is_finite is not False


@dataclass(frozen=True)
class Candidate:
    """One analytic solution for a pivot, before the domain and complexity filters."""

    formula: Formula
    pivot: str
    expression: sympy.Expr


def pivot_candidates(formula: Formula) -> list[Candidate]:
    """Every analytic solution of `output = expression` for each input (sympy `solve`, positive symbols)."""
    names = [formula.output, *formula.ranges]
    positive = {name: sympy.Symbol(name, positive=True) for name in names}
    equation = sympy.Eq(positive[formula.output], sympy.sympify(formula.expression, locals=positive))
    real = {positive[name]: sympy.Symbol(name, real=True) for name in names}
    found = []
    for pivot in formula.ranges:
        try:
            solutions = sympy.solve(equation, positive[pivot], rational=False)
        except (NotImplementedError, ValueError, TypeError):
            continue
        for solution in solutions:
            if isinstance(solution, sympy.Expr) and _analytic(solution):
                found.append(Candidate(formula, pivot, solution.xreplace(real)))
    return found


def transformed_problem(
    candidate: Candidate, rows: np.ndarray, n_train: int, n_test: int, index: int, tolerance: float = 1e-6
) -> Problem | None:
    """The candidate as a problem over the original samples restricted to its valid domain: rows where the
    new form is real and gives back the pivot's sampled value. None when too few rows remain."""
    formula = candidate.formula
    old = [formula.output, *formula.ranges]
    inputs = [name for name in old if name != candidate.pivot]
    columns = [old.index(name) for name in inputs]
    target = rows[:, old.index(candidate.pivot)]
    predicted = evaluate_expression(candidate.expression, inputs, rows[:, columns])
    valid = np.isfinite(predicted) & (
        np.abs(predicted - target) <= tolerance * np.maximum(1.0, np.abs(target))
    )
    kept = np.column_stack([target, rows[:, columns]])[valid]
    if len(kept) < n_train + n_test:
        return None
    symbols = [candidate.pivot, *inputs]
    return Problem(
        name=f"transform_{formula.name}_{candidate.pivot}_{index}",
        symbols=symbols,
        symbol_descs=[formula.descs.get(name, name) for name in symbols],
        symbol_properties=["O"] + ["V"] * len(inputs),
        expression=str(candidate.expression),
        samples={"train": kept[:n_train], "test": kept[n_train : n_train + n_test]},
        family="transformed",
        description=f"Feynman {formula.name} solved for {candidate.pivot}",
        source=f"feynman_{formula.name}",
    )


@dataclass
class TransformReport:
    """How many candidates each LSR-Transform filter kept (the paper's 471 → 111 funnel, here)."""

    candidates: int = 0
    not_analytic_or_unsolved: int = 0
    too_complex: int = 0
    too_few_valid_rows: int = 0
    over_cap: int = 0
    kept: int = 0


def lsr_transform(
    formulas: tuple[Formula, ...] | list[Formula],
    n_train: int,
    n_test: int,
    max_per_formula: int,
    rng: np.random.Generator,
    oversample: int = 4,
) -> tuple[list[Problem], list[Problem], TransformReport]:
    """The originals and their transformed forms: each input pivoted into the target (analytic solutions
    only), kept when its node count lies within the originals' range and enough original samples lie in its
    valid domain; at most `max_per_formula` per formula (in a seeded order)."""
    report = TransformReport()
    originals, transformed = [], []
    rows_of = {}
    for formula in formulas:
        rows = original_samples(formula, oversample * (n_train + n_test), rng)
        rows_of[formula.name] = rows
        originals.append(original_problem(formula, rows, n_train, n_test))
    sizes = [complexity(problem.sympy_expression) for problem in originals]
    low, high = min(sizes), max(sizes)
    for formula in formulas:
        candidates = pivot_candidates(formula)
        pivots_total = len(formula.ranges)
        report.candidates += max(pivots_total, len(candidates))
        report.not_analytic_or_unsolved += max(0, pivots_total - len({c.pivot for c in candidates}))
        order = rng.permutation(len(candidates))
        kept = 0
        for index in order:
            candidate = candidates[int(index)]
            if not low <= complexity(candidate.expression) <= high:
                report.too_complex += 1
                continue
            problem = transformed_problem(candidate, rows_of[formula.name], n_train, n_test, int(index))
            if problem is None:
                report.too_few_valid_rows += 1
                continue
            if kept >= max_per_formula:
                report.over_cap += 1
                continue
            transformed.append(problem)
            kept += 1
    report.kept = len(transformed)
    return originals, transformed, report
