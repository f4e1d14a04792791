"""LSR-Synth-style problems for the four domains: a known term and a synthetic (non-textbook) term with
seeded coefficients, solved through `solve_ivp` (RK45) for the ODE domains, sampled on an evenly spaced grid
(t ∈ [0, 60]; ε ∈ [0, 0.6] and T ∈ [273, 573] K for materials), the last 10 % of the grid out of domain.

The paper's terms were proposed by GPT-4o and checked by experts; here they come from fixed term libraries
per domain (below), drawn by seed, and a problem is kept only when its ODE solves and its output varies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy
from scipy.integrate import solve_ivp

from stages.methods.equations.problem import Problem, evaluate_expression


@dataclass(frozen=True)
class Domain:
    """A domain: output, inputs, state (ODE) or grid inputs, term libraries with coefficient ranges."""

    name: str
    output: str
    inputs: tuple[str, ...]
    descs: dict[str, str]
    known: tuple[str, ...]
    synthetic: tuple[str, ...]
    ode: bool
    initial: dict[str, tuple[float, float]]


DOMAINS: dict[str, Domain] = {
    "chemistry": Domain(
        "chemistry",
        "dA_dt",
        ("t", "A"),
        {"dA_dt": "reaction rate", "t": "time", "A": "concentration"},
        known=("-k1*A", "-k1*A**2", "-k1*A/(1 + k2*A)"),
        synthetic=("-k3*A*exp(-k4*t)", "-k3*sqrt(A)*cos(k4*t)**2", "-k3*A**2*sin(k4*sqrt(A))"),
        ode=True,
        initial={"A": (0.5, 2.0)},
    ),
    "biology": Domain(
        "biology",
        "dP_dt",
        ("t", "P"),
        {"dP_dt": "population growth rate", "t": "time", "P": "population"},
        known=("k1*P*(1 - P/(10*k2))", "k1*P - k2*P**2/10"),
        synthetic=("-k3*P*exp(-k4*t)", "k3*P*sin(k4*t)/5", "-k3*P**2*cos(k4*P)/20"),
        ode=True,
        initial={"P": (1.0, 5.0)},
    ),
    "physics": Domain(
        "physics",
        "dv_dt",
        ("x", "t", "v"),
        {"dv_dt": "acceleration", "x": "position", "t": "time", "v": "velocity"},
        known=("-k1*x - k2*v/5", "-k1*x - k2*x**3/5"),
        synthetic=("-k3*v*x**2/5", "k3*sin(k4*t)*x/5", "-k3*v*exp(-k4*abs(x))/5"),
        ode=True,
        initial={"x": (0.5, 1.5), "v": (-0.5, 0.5)},
    ),
    "materials": Domain(
        "materials",
        "sigma",
        ("epsilon", "T"),
        {"sigma": "stress", "epsilon": "strain", "T": "temperature (K)"},
        known=("k1*100*epsilon*(1 - k2*(T - 273)/1000)", "k1*100*epsilon - k2*epsilon**2*50"),
        synthetic=("k3*20*epsilon**2*exp(-k4*(T - 273)/300)", "k3*10*sqrt(epsilon)*log(T/273)"),
        ode=False,
        initial={},
    ),
}
"""Term libraries per domain; `k1..k4` are drawn in [0.5, 1.5]."""


def _draw_expression(domain: Domain, rng: np.random.Generator) -> str:
    known = domain.known[rng.integers(len(domain.known))]
    synthetic = domain.synthetic[rng.integers(len(domain.synthetic))]
    text = f"{known} + {synthetic}"
    for key in ("k1", "k2", "k3", "k4"):
        text = text.replace(key, f"{rng.uniform(0.5, 1.5):.3f}")
    return str(sympy.sympify(text, locals={n: sympy.Symbol(n, real=True) for n in domain.inputs}))


def _samples(domain: Domain, expression: str, n_points: int, rng: np.random.Generator) -> np.ndarray | None:
    """Rows [y, inputs...] on the evenly spaced grid, or None when the ODE does not solve or y is flat."""
    table = {name: sympy.Symbol(name, real=True) for name in domain.inputs}
    parsed = sympy.sympify(expression, locals=table)
    if domain.ode:
        X = _trajectory(domain, parsed, n_points, rng)
        if X is None:
            return None
    else:
        epsilon = rng.uniform(0.0, 0.6, n_points)
        X = np.column_stack([epsilon, np.linspace(273.0, 573.0, n_points)])
    y = evaluate_expression(parsed, list(domain.inputs), X)
    if not np.isfinite(y).all() or np.std(y) < 1e-6 or np.abs(y).max() > 1e6:
        return None
    return np.column_stack([y, X])


def _trajectory(domain: Domain, parsed: sympy.Expr, n_points: int, rng) -> np.ndarray | None:
    names = list(domain.inputs)
    function = sympy.lambdify([sympy.Symbol(n, real=True) for n in names], parsed, modules="numpy")
    times = np.linspace(0.0, 60.0, n_points)
    start = [rng.uniform(*domain.initial[name]) for name in domain.initial]
    if domain.name == "physics":

        def rhs(t, state):
            return [state[1], function(state[0], t, state[1])]
    else:

        def rhs(t, state):
            return [function(t, state[0])]

    with np.errstate(all="ignore"):
        solution = solve_ivp(rhs, (0.0, 60.0), start, method="RK45", t_eval=times, rtol=1e-8, atol=1e-10)
    if not solution.success or not np.isfinite(solution.y).all() or solution.y.shape[1] != n_points:
        return None
    if domain.name == "physics":
        return np.column_stack([solution.y[0], times, solution.y[1]])
    return np.column_stack([times, solution.y[0]])


def synth_problem(
    domain_name: str,
    index: int,
    n_points: int,
    train_fraction: float,
    rng: np.random.Generator,
    ood_fraction: float = 0.1,
    attempts: int = 50,
) -> Problem:
    """One solvable problem of a domain: the last `ood_fraction` of the grid (in t, or T) out of domain, the
    rest split at random into train (`train_fraction`) and in-domain test."""
    domain = DOMAINS[domain_name]
    for _ in range(attempts):
        expression = _draw_expression(domain, rng)
        rows = _samples(domain, expression, n_points, rng)
        if rows is not None:
            break
    else:
        raise RuntimeError(f"{domain_name}: no solvable problem in {attempts} draws")
    cut = round(n_points * (1 - ood_fraction))
    order = rng.permutation(cut)
    n_train = round(cut * train_fraction)
    symbols = [domain.output, *domain.inputs]
    return Problem(
        name=f"synth_{domain_name}_{index}",
        symbols=symbols,
        symbol_descs=[domain.descs[name] for name in symbols],
        symbol_properties=["O"] + ["V"] * len(domain.inputs),
        expression=expression,
        samples={
            "train": rows[np.sort(order[:n_train])],
            "test": rows[np.sort(order[n_train:])],
            "ood_test": rows[cut:],
        },
        family=f"synth_{domain_name}",
        description=f"LSR-Synth-style {domain_name}: {domain.output} = f({', '.join(domain.inputs)})",
    )
