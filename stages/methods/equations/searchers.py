"""Equation searchers behind one interface: `search(problem, seed) -> SearchResult`.

- :class:`GPLearnSearcher`: gplearn's genetic programming (the card's population 300 × 10 generations);
- :class:`LLMSRSearcher`: the LLM-SR loop — skeletons with ≤ 10 constants fitted by BFGS from ones, scored by
  −MSE on the training rows, kept in islands, each prompt showing the island's two best skeletons and asking
  the proposer for four more; the proposer is pluggable (:mod:`stages.methods.equations.proposers`);
- :class:`DataBlindSearcher`: direct prompting — five hypotheses from the variable names alone (no data
  feedback), constants fitted, the best training fit returned;
- :class:`PySRSearcher`: PySR, only when the package and its Julia runtime are present (else skipped);
- :class:`OracleSearcher`: the ground truth (the metrics' check: NMSE 0, Acc 1, SA 1).
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import sympy

from stages.methods.equations.metrics import fit_constants
from stages.methods.equations.parsing import ExpressionError, parse_expression
from stages.methods.equations.problem import Problem, evaluate_expression
from stages.methods.equations.proposers import PREFIX, Context, GrammarProposer, Proposer


@dataclass
class SearchResult:
    """A searcher's answer: the equation over the problem's inputs, how to predict with it, its budget use."""

    expression: sympy.Expr | None
    predict: Callable[[np.ndarray], np.ndarray] | None
    evaluations: int = 0
    skipped: str = ""
    """Why the searcher did not run (empty when it ran)."""
    trace: list[float] = field(default_factory=list)
    """Best training score after each proposal batch (LLM-SR loop) or generation (gplearn)."""


def expression_predictor(expression: sympy.Expr, inputs: list[str]) -> Callable[[np.ndarray], np.ndarray]:
    """Predictions of a sympy expression (values that are not real become NaN)."""
    return lambda X: evaluate_expression(expression, inputs, X)


class OracleSearcher:
    """Returns the ground truth: every metric must be perfect on it."""

    name = "oracle"

    def search(self, problem: Problem, seed: int) -> SearchResult:
        truth = problem.sympy_expression
        return SearchResult(truth, expression_predictor(truth, problem.inputs))


# ------------------------------------------------------------------------------------------- gplearn


def _protected_exp(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.where(x < 50, np.exp(np.minimum(x, 50)), np.exp(50.0))


_GP_SYMPY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "sqrt": lambda a: sympy.sqrt(sympy.Abs(a)),
    "log": lambda a: sympy.log(sympy.Abs(a)),
    "sin": sympy.sin,
    "cos": sympy.cos,
    "neg": lambda a: -a,
    "inv": lambda a: 1 / a,
    "exp": sympy.exp,
    "abs": sympy.Abs,
}
"""gplearn primitives as sympy (protected division/log/sqrt written as the plain operations: the form whose
symbolic accuracy is judged; predictions use gplearn's own protected program)."""


def gplearn_to_sympy(program: list, inputs: list[str]) -> sympy.Expr:
    """A gplearn program (prefix list of functions, feature indices and float constants) as sympy."""
    symbols = [sympy.Symbol(name, real=True) for name in inputs]
    position = 0

    def node() -> sympy.Expr:
        nonlocal position
        item = program[position]
        position += 1
        if isinstance(item, int | np.integer):
            return symbols[int(item)]
        if isinstance(item, float | np.floating):
            return sympy.Float(float(item))
        arguments = [node() for _ in range(item.arity)]
        return _GP_SYMPY[item.name](*arguments)

    return node()


class GPLearnSearcher:
    """gplearn's SymbolicRegressor (single process, seeded)."""

    name = "gplearn"

    def __init__(self, population_size: int = 300, generations: int = 10, parsimony: float = 0.001) -> None:
        self.population_size = population_size
        self.generations = generations
        self.parsimony = parsimony

    def search(self, problem: Problem, seed: int) -> SearchResult:
        from gplearn.functions import make_function
        from gplearn.genetic import SymbolicRegressor

        exp = make_function(function=_protected_exp, name="exp", arity=1, wrap=False)
        model = SymbolicRegressor(
            population_size=self.population_size,
            generations=self.generations,
            function_set=("add", "sub", "mul", "div", "sqrt", "log", "sin", "cos", "neg", "inv", exp),
            parsimony_coefficient=self.parsimony,
            random_state=seed % (2**31),
            n_jobs=1,
        )
        X, y = problem.split("train")
        with np.errstate(all="ignore"):
            model.fit(X, y)
        expression = gplearn_to_sympy(model._program.program, problem.inputs)
        trace = [float(v) for v in model.run_details_["best_fitness"]]

        def predict(rows: np.ndarray) -> np.ndarray:
            with np.errstate(all="ignore"):
                return model.predict(rows)

        return SearchResult(expression, predict, self.population_size * self.generations, trace=trace)


# ------------------------------------------------------------------------------------- LLM-SR-style loop


@dataclass
class Scored:
    """A fitted skeleton: its text, constants and training score (−NMSE: −MSE / var y, same ranking)."""

    skeleton: str
    constants: list[float]
    score: float


def fit_skeleton(skeleton: str, problem: Problem, max_iterations: int = 100) -> Scored | None:
    """Parse a skeleton under the whitelist, fit its constants by BFGS from ones, score it by −MSE/var(y)."""
    params = sorted({name for name in _constant_names(skeleton)}, key=lambda name: int(name[len(PREFIX) :]))
    try:
        template = parse_expression(skeleton, [*problem.inputs, *params])
    except ExpressionError:
        return None
    symbols = [sympy.Symbol(name, real=True) for name in params]
    X, y = problem.split("train")
    values, loss = fit_constants(
        template, symbols, [1.0] * len(symbols), problem.inputs, X, y, max_iterations
    )
    if not np.isfinite(loss) or loss >= 1e12:
        return None
    return Scored(skeleton, values, -loss)


def _constant_names(skeleton: str) -> list[str]:
    import re

    return re.findall(rf"\b{PREFIX}\d+\b", skeleton)


def skeleton_expression(scored: Scored, inputs: list[str]) -> sympy.Expr:
    """A fitted skeleton as an expression over the inputs (its constants substituted)."""
    params = sorted(set(_constant_names(scored.skeleton)), key=lambda name: int(name[len(PREFIX) :]))
    template = parse_expression(scored.skeleton, [*inputs, *params])
    table = {
        sympy.Symbol(name, real=True): sympy.Float(value)
        for name, value in zip(params, scored.constants, strict=True)
    }
    return template.xreplace(table)


def _proposer(spec: Proposer | str | dict | None) -> Proposer:
    """A proposer object, or one built from a params value (grammar by default; see `lm_proposers`)."""
    if spec is None or isinstance(spec, str | dict):
        if spec is None or spec == "grammar":
            return GrammarProposer()
        from stages.methods.equations.lm_proposers import build_proposer

        return build_proposer(spec)
    return spec


class LLMSRSearcher:
    """The LLM-SR evolutionary loop over skeletons with a pluggable proposer (grammar by default)."""

    name = "llmsr"

    def __init__(
        self,
        proposals: int = 48,
        islands: int = 4,
        samples_per_prompt: int = 4,
        in_context: int = 2,
        proposer: Proposer | str | dict | None = None,
        max_iterations: int = 100,
    ) -> None:
        self.proposals = proposals
        self.islands = islands
        self.samples_per_prompt = samples_per_prompt
        self.in_context = in_context
        self.proposer = _proposer(proposer)
        self.max_iterations = max_iterations

    def search(self, problem: Problem, seed: int) -> SearchResult:
        rng = np.random.default_rng(seed)
        context = Context(tuple(problem.inputs), tuple(problem.symbol_descs[1:]))
        initial = (
            " + ".join(f"{PREFIX}{i}*{name}" for i, name in enumerate(problem.inputs))
            + f" + {PREFIX}{len(problem.inputs)}"
        )
        seedling = fit_skeleton(initial, problem, self.max_iterations)
        islands: list[list[Scored]] = [[seedling] if seedling else [] for _ in range(self.islands)]
        used, trace, prompt = 1, [], 0
        while used < self.proposals:
            island = islands[prompt % self.islands]
            prompt += 1
            examples = [item.skeleton for item in sorted(island, key=lambda s: -s.score)[: self.in_context]]
            count = min(self.samples_per_prompt, self.proposals - used)
            for skeleton in self.proposer.propose(context, examples, count, rng):
                scored = fit_skeleton(skeleton, problem, self.max_iterations)
                if scored is not None:
                    island.append(scored)
            used += count
            trace.append(max((s.score for group in islands for s in group), default=float("-inf")))
        best = max((s for group in islands for s in group), key=lambda s: s.score, default=None)
        if best is None:
            return SearchResult(None, None, used, trace=trace)
        expression = skeleton_expression(best, problem.inputs)
        return SearchResult(expression, expression_predictor(expression, problem.inputs), used, trace=trace)


class DataBlindSearcher:
    """Direct prompting: `hypotheses` skeletons from the variable names alone, constants fitted, the best fit
    returned (no proposal sees a score)."""

    name = "data_blind"

    def __init__(
        self, hypotheses: int = 5, proposer: Proposer | str | dict | None = None, max_iterations: int = 100
    ) -> None:
        self.hypotheses = hypotheses
        self.proposer = _proposer(proposer)
        self.max_iterations = max_iterations

    def search(self, problem: Problem, seed: int) -> SearchResult:
        rng = np.random.default_rng(seed)
        context = Context(tuple(problem.inputs), tuple(problem.symbol_descs[1:]))
        skeletons = self.proposer.propose(context, [], self.hypotheses, rng)
        fitted = [s for s in (fit_skeleton(text, problem, self.max_iterations) for text in skeletons) if s]
        if not fitted:
            return SearchResult(None, None, self.hypotheses)
        best = max(fitted, key=lambda s: s.score)
        expression = skeleton_expression(best, problem.inputs)
        return SearchResult(expression, expression_predictor(expression, problem.inputs), self.hypotheses)


# --------------------------------------------------------------------------------------------------- PySR


def pysr_unavailable() -> str:
    """Why PySR cannot run here ('' when it can): the package and a Julia runtime are both needed."""
    if importlib.util.find_spec("pysr") is None:
        return "the pysr package is not installed (it needs a Julia runtime, which is not installed here)"
    if shutil.which("julia") is None and importlib.util.find_spec("juliacall") is None:
        return "no Julia runtime on PATH"
    return ""


class PySRSearcher:
    """PySR at a matched budget (populations × population size × iterations); skipped without Julia."""

    name = "pysr"

    def __init__(self, populations: int = 10, population_size: int = 30, iterations: int = 10) -> None:
        self.populations = populations
        self.population_size = population_size
        self.iterations = iterations

    def search(self, problem: Problem, seed: int) -> SearchResult:
        reason = pysr_unavailable()
        if reason:
            return SearchResult(None, None, skipped=reason)
        import pysr  # pragma: no cover - needs Julia

        model = pysr.PySRRegressor(  # pragma: no cover
            populations=self.populations,
            population_size=self.population_size,
            niterations=self.iterations,
            random_state=seed,
            deterministic=True,
            parallelism="serial",
            unary_operators=["sin", "cos", "exp", "log", "sqrt"],
        )
        X, y = problem.split("train")  # pragma: no cover
        model.fit(X, y, variable_names=problem.inputs)  # pragma: no cover
        expression = parse_expression(str(model.sympy()), problem.inputs)  # pragma: no cover
        return SearchResult(expression, expression_predictor(expression, problem.inputs), self.iterations)


SEARCHERS = {
    "oracle": OracleSearcher,
    "gplearn": GPLearnSearcher,
    "llmsr": LLMSRSearcher,
    "data_blind": DataBlindSearcher,
    "pysr": PySRSearcher,
}
"""Searcher classes by name (options are their constructor's keywords)."""


def build_searcher(name: str, options: dict | None = None):
    """A searcher by name with keyword options (unknown names or options raise ValueError naming them)."""
    if name not in SEARCHERS:
        raise ValueError(f"unknown searcher {name!r}; searchers: {', '.join(SEARCHERS)}")
    try:
        return SEARCHERS[name](**(options or {}))
    except TypeError as error:
        raise ValueError(f"searcher {name!r}: {error}") from None
