"""The benchmark's metrics: NMSE (NaN predictions dropped, as the official code), Acc_τ (a max relative
error), and symbolic accuracy by the offline stand-in for the GPT-4o judge.

Symbolic accuracy (SA) here: the hypothesis's numeric literals become free constants, fitted by BFGS on the
training rows from their written values; the fitted constants are rounded by `nsimplify`; the hypothesis is
equivalent when `h − gt` reduces to 0 (expand, together, cancel: a cheaper `simplify`), or else when it
equals the ground truth to a relative tolerance on fresh points drawn uniformly in the bounding box of the
problem's data (points where the ground truth is not real are skipped). The judge's question — "do
constants exist that make the hypothesis the ground truth?" — is answered by the fit, not a language model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy
from scipy.optimize import minimize

from stages.methods.equations.problem import Problem, evaluate_expression, numeric_function

TAU = 0.1


def nmse(y: np.ndarray, prediction: np.ndarray) -> float:
    """Σ(ŷ − y)² / Σ(y − ȳ)² over the rows whose prediction is not NaN (the official code's rule; ȳ over the
    same rows). Infinite when no prediction is usable (the official code would give NaN)."""
    y = np.asarray(y, dtype=np.float64)
    prediction = np.asarray(prediction, dtype=np.float64)
    keep = ~np.isnan(prediction)
    if not keep.any():
        return float("inf")
    y, prediction = y[keep], prediction[keep]
    with np.errstate(all="ignore"):
        value = float(np.mean((y - prediction) ** 2) / np.var(y))
    return value if np.isfinite(value) else float("inf")


def accuracy_tau(y: np.ndarray, prediction: np.ndarray, tau: float = TAU) -> bool:
    """Acc_τ = 1[max_i |(ŷ_i − y_i) / y_i| ≤ τ]; a NaN prediction or a zero target with an error fails it."""
    y = np.asarray(y, dtype=np.float64)
    prediction = np.asarray(prediction, dtype=np.float64)
    if len(y) == 0 or np.isnan(prediction).any():
        return False
    with np.errstate(all="ignore"):
        relative = np.abs((prediction - y) / y)
    relative[(prediction == y)] = 0.0
    worst = float(np.max(relative))
    return bool(np.isfinite(worst) and worst <= tau)


# ----------------------------------------------------------------------------------------- constants


def parameterise(
    expression: sympy.Expr, prefix: str = "c"
) -> tuple[sympy.Expr, list[sympy.Symbol], list[float]]:
    """Replace the numeric literals of `expression` (Floats anywhere but in exponents; numeric coefficients
    of products and constants of sums) by fresh symbols `c0, c1, ...`; returns the template, the symbols and
    the literals' values (the starting point of a fit). Integer exponents stay fixed."""
    symbols: list[sympy.Symbol] = []
    values: list[float] = []

    def fresh(value: sympy.Expr) -> sympy.Symbol:
        symbol = sympy.Symbol(f"{prefix}{len(symbols)}", real=True)
        symbols.append(symbol)
        values.append(float(value))
        return symbol

    def walk(node: sympy.Expr) -> sympy.Expr:
        if isinstance(node, sympy.Float):
            return fresh(node)
        if node.is_Atom:
            return node
        if isinstance(node, sympy.Pow):
            base, exponent = node.args
            return walk(base) ** (
                sympy.nsimplify(exponent) if isinstance(exponent, sympy.Float) else walk(exponent)
            )
        args = []
        for arg in node.args:
            numeric = arg.is_Number and arg not in (sympy.S.One, sympy.S.NegativeOne)
            args.append(fresh(arg) if numeric and isinstance(node, sympy.Mul | sympy.Add) else walk(arg))
        return node.func(*args)

    return walk(expression), symbols, values


def _objective(template, params, inputs, X, y):
    function = numeric_function([*params, *inputs], template)
    columns = [X[:, j] for j in range(X.shape[1])]
    scale = float(np.var(y)) or 1.0

    def loss(theta: np.ndarray) -> float:
        if function is None:
            return 1e12
        with np.errstate(all="ignore"):
            prediction = np.broadcast_to(np.asarray(function(*theta, *columns), dtype=np.float64), y.shape)
            value = float(np.mean((prediction - y) ** 2)) / scale
        return value if np.isfinite(value) else 1e12

    return loss


def fit_constants(
    template: sympy.Expr,
    params: list[sympy.Symbol],
    start: list[float],
    inputs: list[str],
    X: np.ndarray,
    y: np.ndarray,
    max_iterations: int = 200,
) -> tuple[list[float], float]:
    """Fit `params` of `template` by BFGS (scipy) on the mean squared error over (X, y), from `start`;
    returns the constants and the final normalised MSE (MSE / var(y))."""
    table = {name: sympy.Symbol(name, real=True) for name in inputs}
    loss = _objective(template, params, [table[name] for name in inputs], X, y)
    if not params:
        return [], loss(np.zeros(0))
    start_array = np.asarray(start, dtype=np.float64)
    with np.errstate(all="ignore"):
        result = minimize(loss, start_array, method="BFGS", options={"maxiter": max_iterations})
    best = result.x if result.fun <= loss(start_array) else start_array
    return [float(value) for value in best], float(min(result.fun, loss(start_array)))


# ------------------------------------------------------------------------------------ symbolic accuracy


@dataclass(frozen=True)
class Judgement:
    """The stand-in judge's answer: equivalent or not, how it was decided, and the fitted hypothesis."""

    equivalent: bool
    how: str
    fitted: str


def fresh_points(problem: Problem, n: int, rng: np.random.Generator) -> np.ndarray:
    """n points drawn uniformly in the bounding box of the problem's inputs over all its splits."""
    stacked = np.vstack([data[:, 1:] for data in problem.samples.values()])
    low, high = stacked.min(axis=0), stacked.max(axis=0)
    return rng.uniform(low, high, size=(n, stacked.shape[1]))


def _identical(first: np.ndarray, second: np.ndarray, rtol: float) -> bool:
    both = np.isfinite(second)
    if both.sum() < 10 or np.isnan(first[both]).any():
        return False
    scale = np.maximum(np.abs(second[both]), 1e-8 * max(1.0, float(np.abs(second[both]).max())))
    return bool(np.max(np.abs(first[both] - second[both]) / scale) <= rtol)


def _rounded(template: sympy.Expr, params: list[sympy.Symbol], values: list[float]) -> sympy.Expr:
    return template.xreplace(
        {
            p: sympy.nsimplify(v, [sympy.pi], tolerance=1e-6 * max(1.0, abs(v)))
            for p, v in zip(params, values, strict=True)
        }
    )


def algebraically_zero(difference: sympy.Expr) -> bool:
    """Whether `difference` reduces to 0 by expansion and cancellation (sympy's `simplify` without its
    trigonometric search, which costs seconds per expression; the numeric identity covers the rest)."""
    try:
        return sympy.cancel(sympy.together(sympy.expand(difference))) == 0
    except (TypeError, ValueError, NotImplementedError, RecursionError, sympy.PolynomialError):
        return False


def symbolic_accuracy(
    hypothesis: sympy.Expr,
    problem: Problem,
    rng: np.random.Generator,
    rtol: float = 1e-4,
    points: int = 256,
    max_simplify_ops: int = 60,
) -> Judgement:
    """Whether constants exist that make `hypothesis` the problem's ground truth (the card's stand-in)."""
    inputs = problem.inputs
    truth = problem.sympy_expression
    template, params, start = parameterise(hypothesis)
    X, y = problem.split("train")
    values, _ = fit_constants(template, params, start, inputs, X, y)
    fitted = template.xreplace(dict(zip(params, values, strict=True)))
    rounded = _rounded(template, params, values)
    fresh = fresh_points(problem, points, rng)
    expected = evaluate_expression(truth, inputs, fresh)
    candidates = [("rounded", rounded), ("fitted", fitted)]
    numeric = [
        name
        for name, form in candidates
        if _identical(evaluate_expression(form, inputs, fresh), expected, rtol)
    ]
    if not numeric:
        return Judgement(False, "differs on fresh points", str(rounded))
    if sympy.count_ops(rounded) + sympy.count_ops(truth) <= max_simplify_ops and algebraically_zero(
        rounded - truth
    ):
        return Judgement(True, "symbolic: h - gt simplifies to 0", str(rounded))
    return Judgement(True, f"numeric identity ({numeric[0]} constants, rtol {rtol:g})", str(rounded))
