"""The problem layout of LLM-SRBench: metadata and train / test / ood_test arrays with column 0 = y.

A problem folder holds `problem.json` (name, symbols, symbol_descs, symbol_properties — `O` output, `V`
input —, expression, family, description) and one Parquet file per split (`train.parquet`, `test.parquet`,
optionally `ood_test.parquet`) whose columns are the symbols in order, the output first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl
import sympy

from stages.core.errors import PipelineError
from stages.core.io import OutputTransaction, read_json, write_json, write_parquet
from stages.methods.equations.parsing import ExpressionError, parse_expression, symbol_table

SPLITS = ("train", "test", "ood_test")
PROPERTIES = ("O", "V")


class ProblemError(PipelineError):
    """A problem folder or its definition is unusable; the message names the file or field."""


@dataclass
class Problem:
    """One equation-discovery problem: the ground truth `expression` gives `symbols[0]` from the others."""

    name: str
    symbols: list[str]
    symbol_descs: list[str]
    symbol_properties: list[str]
    expression: str
    samples: dict[str, np.ndarray] = field(default_factory=dict)
    family: str = "user"
    description: str = ""
    source: str = ""
    """For a transformed problem: the original problem it was derived from."""

    def __post_init__(self) -> None:
        check_definition(self)

    @property
    def output(self) -> str:
        return self.symbols[0]

    @property
    def inputs(self) -> list[str]:
        return self.symbols[1:]

    @property
    def table(self) -> dict[str, sympy.Symbol]:
        return symbol_table(self.symbols)

    @property
    def sympy_expression(self) -> sympy.Expr:
        """The ground truth as a sympy expression over the inputs."""
        return parse_expression(self.expression, symbol_table(self.inputs))

    def split(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """`(X, y)` of a split (X: the inputs in order, y: column 0)."""
        data = self.samples[name]
        return data[:, 1:], data[:, 0]

    @property
    def has_ood(self) -> bool:
        return "ood_test" in self.samples and len(self.samples["ood_test"]) > 0


def check_definition(problem: Problem) -> None:
    """Names and properties consistent, one output first, the expression readable over the inputs."""
    n = len(problem.symbols)
    if n < 2:
        raise ProblemError(f"problem {problem.name!r}: needs an output and at least one input symbol")
    if len(set(problem.symbols)) != n:
        raise ProblemError(f"problem {problem.name!r}: symbols repeat: {problem.symbols}")
    for what, values in (
        ("symbol_descs", problem.symbol_descs),
        ("symbol_properties", problem.symbol_properties),
    ):
        if len(values) != n:
            raise ProblemError(f"problem {problem.name!r}: {what} has {len(values)} entries for {n} symbols")
    if problem.symbol_properties[0] != "O" or any(p != "V" for p in problem.symbol_properties[1:]):
        raise ProblemError(
            f"problem {problem.name!r}: symbol_properties must be ['O', 'V', ...] (output first)"
        )
    try:
        expression = parse_expression(problem.expression, symbol_table(problem.inputs))
    except ExpressionError as error:
        raise ProblemError(f"problem {problem.name!r}: {error}") from None
    unknown = sorted(str(s) for s in expression.free_symbols if str(s) not in problem.inputs)
    if unknown:
        raise ProblemError(f"problem {problem.name!r}: expression uses non-inputs {unknown}")
    for split, data in problem.samples.items():
        if split not in SPLITS:
            raise ProblemError(
                f"problem {problem.name!r}: unknown split {split!r} (splits: {', '.join(SPLITS)})"
            )
        if data.ndim != 2 or data.shape[1] != n:
            raise ProblemError(
                f"problem {problem.name!r}: split {split} must have {n} columns, got {data.shape}"
            )


def metadata(problem: Problem) -> dict:
    """The JSON part of a problem."""
    return {
        "name": problem.name,
        "symbols": problem.symbols,
        "symbol_descs": problem.symbol_descs,
        "symbol_properties": problem.symbol_properties,
        "expression": problem.expression,
        "family": problem.family,
        "description": problem.description,
        "source": problem.source,
    }


def write_problem_files(problem: Problem, folder: str | Path) -> None:
    """Write a problem's files into `folder` directly (a staged folder; see :func:`write_problem`)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    write_json(metadata(problem), folder / "problem.json")
    for split, data in problem.samples.items():
        frame = pl.DataFrame({name: data[:, j] for j, name in enumerate(problem.symbols)})
        write_parquet(frame, folder / f"{split}.parquet")


def write_problem(problem: Problem, folder: str | Path) -> Path:
    """Write a problem folder all or nothing (staged, then moved into place); returns the folder."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ProblemError(f"{folder}: exists and is not a folder")
    folder.parent.mkdir(parents=True, exist_ok=True)
    with OutputTransaction(folder.parent, owner="icml25 sr-problem") as transaction:
        write_problem_files(problem, transaction.path(folder))
    return folder


def read_problem(folder: str | Path) -> Problem:
    """Read a problem folder written by :func:`write_problem` (or by hand in the same layout)."""
    folder = Path(folder)
    meta_path = folder / "problem.json"
    if not meta_path.is_file():
        raise ProblemError(f"{folder}: not a problem folder (no problem.json)")
    meta = read_json(meta_path)
    missing = [key for key in ("name", "symbols", "symbol_properties", "expression") if key not in meta]
    if missing:
        raise ProblemError(f"{meta_path}: missing key(s) {', '.join(missing)}")
    samples = {}
    for split in SPLITS:
        path = folder / f"{split}.parquet"
        if path.is_file():
            frame = pl.read_parquet(path)
            absent = [name for name in meta["symbols"] if name not in frame.columns]
            if absent:
                raise ProblemError(f"{path}: missing column(s) {', '.join(absent)}")
            samples[split] = frame.select(meta["symbols"]).cast(pl.Float64).to_numpy()
    if "train" not in samples or "test" not in samples:
        raise ProblemError(f"{folder}: needs train.parquet and test.parquet")
    return Problem(
        name=meta["name"],
        symbols=list(meta["symbols"]),
        symbol_descs=list(meta.get("symbol_descs") or meta["symbols"]),
        symbol_properties=list(meta["symbol_properties"]),
        expression=meta["expression"],
        samples=samples,
        family=meta.get("family", "user"),
        description=meta.get("description", ""),
        source=meta.get("source", ""),
    )


def finite_form(expression: sympy.Expr) -> sympy.Expr:
    """`expression` with sympy's infinities and accumulation bounds (zoo, oo, AccumBounds, as `sin(oo)`)
    replaced by NaN, so it can be evaluated numerically."""
    expression = sympy.sympify(expression).xreplace(
        {sympy.zoo: sympy.nan, sympy.oo: sympy.nan, -sympy.oo: sympy.nan}
    )
    return expression.replace(lambda node: isinstance(node, sympy.AccumBounds), lambda node: sympy.nan)


def numeric_function(arguments: list[sympy.Symbol], expression: sympy.Expr):
    """`sympy.lambdify` over numpy of the finite form; None when numpy cannot print the expression."""
    try:
        return sympy.lambdify(arguments, finite_form(expression), modules="numpy")
    except (
        NotImplementedError,
        TypeError,
        ValueError,
    ):  # PrintMethodNotImplementedError is a NotImplementedError
        return None


def evaluate_expression(expression: sympy.Expr, inputs: list[str], X: np.ndarray) -> np.ndarray:
    """Evaluate a sympy expression over the rows of X (columns = `inputs`); complex or invalid values → NaN."""
    table = symbol_table(inputs)
    function = numeric_function([table[name] for name in inputs], expression)
    if function is None:
        return np.full(X.shape[0], np.nan)
    with np.errstate(all="ignore"):
        values = function(*[X[:, j].astype(np.complex128) for j in range(X.shape[1])])
    values = np.broadcast_to(np.asarray(values, dtype=np.complex128), (X.shape[0],))
    real = values.real.copy()
    imaginary = np.abs(values.imag) > 1e-9 * np.maximum(1.0, np.abs(values.real))
    real[imaginary | ~np.isfinite(real)] = np.nan
    return real
