"""Your own equations and data: evaluate a hypothesis (`icml25 sr-eval`) and write a problem (`icml25
sr-problem`). Every input is checked first; errors name the file, column or option, and nothing is written
unless everything succeeds."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import polars as pl

from stages.core.errors import PipelineError
from stages.core.io import OutputTransaction, write_json, write_text
from stages.methods.equations.metrics import TAU, accuracy_tau, nmse, symbolic_accuracy
from stages.methods.equations.parsing import ExpressionError, parse_expression, symbol_table
from stages.methods.equations.problem import Problem, ProblemError, read_problem, write_problem

NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class EquationInputError(PipelineError):
    """A user's table, expression or option is unusable; the message names it."""


def read_table(path: str | Path, what: str) -> pl.DataFrame:
    """A Parquet or CSV table (by extension), numeric columns cast to float."""
    path = Path(path)
    if not path.is_file():
        raise EquationInputError(f"{what} {path}: no such file")
    try:
        if path.suffix == ".parquet":
            return pl.read_parquet(path)
        if path.suffix == ".csv":
            return pl.read_csv(path)
    except Exception as error:  # a corrupt file: one line naming it
        raise EquationInputError(f"{what} {path}: cannot be read ({type(error).__name__})") from None
    raise EquationInputError(f"{what} {path}: use a .parquet or .csv file")


def _numeric(frame: pl.DataFrame, columns: list[str], path: str) -> np.ndarray:
    missing = [name for name in columns if name not in frame.columns]
    if missing:
        raise EquationInputError(
            f"{path}: missing column(s) {', '.join(missing)} (has: {', '.join(frame.columns)})"
        )
    try:
        values = frame.select(columns).cast(pl.Float64).to_numpy()
    except Exception:
        raise EquationInputError(f"{path}: columns {', '.join(columns)} must be numeric") from None
    bad = [columns[j] for j in range(values.shape[1]) if not np.isfinite(values[:, j]).all()]
    if bad:
        raise EquationInputError(f"{path}: column(s) {', '.join(bad)} hold missing or infinite values")
    if len(values) < 2:
        raise EquationInputError(f"{path}: needs at least 2 rows")
    return values


def problem_from_table(data: str, target: str, truth: str | None, ood: str | None) -> Problem:
    """A problem from your table: `target` is y, every other numeric column an input; all rows are the
    in-domain test (and train, for the SA constant fit); `ood`: a second table with the same columns."""
    frame = read_table(data, "--data")
    inputs = [name for name in frame.columns if name != target and frame[name].dtype.is_numeric()]
    if target not in frame.columns:
        raise EquationInputError(f"--data {data}: no column {target!r} (has: {', '.join(frame.columns)})")
    bad = [name for name in [target, *inputs] if not NAME.match(name) or name.startswith("cst")]
    if bad:
        raise EquationInputError(f"--data {data}: column name(s) {bad} are not usable as symbols")
    if not inputs:
        raise EquationInputError(f"--data {data}: no numeric input column besides {target!r}")
    rows = _numeric(frame, [target, *inputs], f"--data {data}")
    samples = {"train": rows, "test": rows}
    if ood:
        samples["ood_test"] = _numeric(read_table(ood, "--ood"), [target, *inputs], f"--ood {ood}")
    try:
        return Problem(
            name=Path(data).stem,
            symbols=[target, *inputs],
            symbol_descs=[target, *inputs],
            symbol_properties=["O"] + ["V"] * len(inputs),
            expression=truth or target_placeholder(inputs),
            samples=samples,
            description="" if truth else "no ground truth given",
        )
    except (ExpressionError, ProblemError) as error:
        raise EquationInputError(f"--truth: {error}") from None


def target_placeholder(inputs: list[str]) -> str:
    """A stand-in ground truth when none is given (symbolic accuracy is then not reported)."""
    return f"0*{inputs[0]}"


def predictions_from_file(path: str, problem: Problem) -> dict[str, np.ndarray]:
    """Predictions per split from a table with a `prediction` column and a `split` column (test / ood_test),
    rows in the order of the problem's split; without `split`, every row is the test split."""
    frame = read_table(path, "--predictions")
    if "prediction" not in frame.columns:
        raise EquationInputError(
            f"--predictions {path}: needs a 'prediction' column (has: {', '.join(frame.columns)})"
        )
    splits = frame["split"].cast(pl.Utf8).to_list() if "split" in frame.columns else ["test"] * frame.height
    unknown = sorted(set(splits) - {"test", "ood_test"})
    if unknown:
        raise EquationInputError(f"--predictions {path}: unknown split value(s) {unknown} (test, ood_test)")
    try:
        values = frame["prediction"].cast(pl.Float64).to_numpy()
    except Exception:
        raise EquationInputError(
            f"--predictions {path}: column 'prediction' must be numeric (NaN allowed)"
        ) from None
    out = {}
    for split in ("test", "ood_test"):
        chosen = values[np.array(splits) == split]
        expected = len(problem.samples.get(split, [])) if split in problem.samples else 0
        if len(chosen) != expected:
            raise EquationInputError(
                f"--predictions {path}: {len(chosen)} {split} rows, the problem has {expected}"
            )
        if expected:
            out[split] = chosen
    return out


def evaluate(
    problem: Problem,
    expression: str | None,
    predictions: dict[str, np.ndarray] | None,
    tau: float,
    seed: int,
    has_truth: bool,
) -> dict:
    """NMSE ID/OOD, Acc_τ ID/OOD and (with an expression and a ground truth) symbolic accuracy."""
    hypothesis = None
    if expression is not None:
        try:
            hypothesis = parse_expression(expression, symbol_table(problem.inputs))
        except ExpressionError as error:
            raise EquationInputError(f"--expression: {error}") from None
    from stages.methods.equations.problem import evaluate_expression

    report: dict = {"problem": problem.name, "hypothesis": expression, "tau": tau}
    for split, suffix in (("test", "id"), ("ood_test", "ood")):
        if split not in problem.samples:
            report[f"nmse_{suffix}"] = report[f"acc_{suffix}"] = None
            continue
        X, y = problem.split(split)
        prediction = (
            evaluate_expression(hypothesis, problem.inputs, X)
            if hypothesis is not None
            else predictions[split]
        )
        report[f"nmse_{suffix}"] = nmse(y, prediction)
        report[f"acc_{suffix}"] = accuracy_tau(y, prediction, tau)
        report[f"nan_predictions_{suffix}"] = int(np.isnan(prediction).sum())
    if hypothesis is not None and has_truth:
        judgement = symbolic_accuracy(hypothesis, problem, np.random.default_rng(seed))
        report.update(symbolic_accuracy=judgement.equivalent, sa_how=judgement.how, fitted=judgement.fitted)
    else:
        report["symbolic_accuracy"] = None
        report["sa_how"] = "not judged (no expression or no ground truth)"
    report["ground_truth"] = problem.expression if has_truth else None
    return report


def report_markdown(report: dict) -> str:
    lines = [f"# sr-eval: {report['problem']}", "", "| metric | value |", "|---|---|"]
    for key in (
        "hypothesis",
        "ground_truth",
        "nmse_id",
        "nmse_ood",
        "acc_id",
        "acc_ood",
        "symbolic_accuracy",
        "sa_how",
    ):
        lines.append(f"| {key} | {report.get(key)} |")
    return "\n".join(lines) + "\n"


def write_report(report: dict, output: str | Path) -> list[Path]:
    """`report.json` and `report.md` into the folder `output`, all or nothing."""
    output = Path(output)
    if output.exists() and not output.is_dir():
        raise EquationInputError(f"--output {output}: exists and is not a folder")
    output.parent.mkdir(parents=True, exist_ok=True)
    files = [output / "report.json", output / "report.md"]
    with OutputTransaction(output.parent, owner="icml25 sr-eval") as transaction:
        write_json(report, transaction.path(files[0]))
        write_text(report_markdown(report), transaction.path(files[1]))
    return files


def sr_eval(
    output: str,
    problem: str | None = None,
    data: str | None = None,
    target: str | None = None,
    truth: str | None = None,
    ood: str | None = None,
    expression: str | None = None,
    predictions: str | None = None,
    tau: float = TAU,
    seed: int = 0,
) -> dict:
    """Evaluate a hypothesis (expression or predictions file) on a problem folder or your own table."""
    if (problem is None) == (data is None):
        raise EquationInputError("give exactly one of --problem (a problem folder) or --data (a table)")
    if (expression is None) == (predictions is None):
        raise EquationInputError("give exactly one of --expression or --predictions")
    if not tau > 0:
        raise EquationInputError(f"--tau {tau}: must be > 0")
    if problem is not None:
        if target or truth or ood:
            raise EquationInputError("--target, --truth and --ood go with --data, not --problem")
        try:
            loaded = read_problem(problem)
        except ProblemError as error:
            raise EquationInputError(f"--problem: {error}") from None
        has_truth = True
    else:
        if not target:
            raise EquationInputError("--data needs --target (the output column)")
        loaded = problem_from_table(data, target, truth, ood)
        has_truth = truth is not None
    given = predictions_from_file(predictions, loaded) if predictions else None
    report = evaluate(loaded, expression, given, tau, seed, has_truth)
    write_report(report, output)
    return report


def parse_range(text: str) -> tuple[str, float, float]:
    """`name=low:high` → (name, low, high)."""
    match = re.fullmatch(r"\s*([A-Za-z][A-Za-z0-9_]*)\s*=\s*([^:]+):(.+)", text)
    if not match:
        raise EquationInputError(f"--range {text!r}: write name=low:high")
    try:
        low, high = float(match.group(2)), float(match.group(3))
    except ValueError:
        raise EquationInputError(f"--range {text!r}: low and high must be numbers") from None
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise EquationInputError(f"--range {text!r}: needs finite low < high")
    return match.group(1), low, high


def sr_problem(
    equation: str,
    ranges: list[str],
    output: str,
    n_train: int = 1000,
    n_test: int = 500,
    ood_variable: str | None = None,
    ood_fraction: float = 0.1,
    seed: int = 0,
    name: str | None = None,
) -> Problem:
    """Write `y = f(x, ...)` with uniform input ranges into the problem layout; with `ood_variable`, the top
    `ood_fraction` of that variable's range is held out as `ood_test` (train/test drawn below it)."""
    if "=" not in equation:
        raise EquationInputError(f"--equation {equation!r}: write output = expression")
    left, right = (part.strip() for part in equation.split("=", 1))
    if not NAME.match(left):
        raise EquationInputError(f"--equation: output {left!r} is not a name")
    parsed = [parse_range(text) for text in ranges]
    names = [entry[0] for entry in parsed]
    if len(set(names)) != len(names) or left in names:
        raise EquationInputError("--range: each input once, and not the output")
    if n_train < 2 or n_test < 2:
        raise EquationInputError("--n-train and --n-test must be ≥ 2")
    if not 0 < ood_fraction < 1:
        raise EquationInputError(f"--ood-fraction {ood_fraction}: must be in (0, 1)")
    if ood_variable is not None and ood_variable not in names:
        raise EquationInputError(f"--ood-variable {ood_variable!r}: not one of the ranged inputs {names}")
    try:
        expression = parse_expression(right, symbol_table(names))
    except ExpressionError as error:
        raise EquationInputError(f"--equation: {error}") from None
    rng = np.random.default_rng(seed)
    from stages.methods.equations.problem import evaluate_expression

    def draw(n: int, top: bool | None) -> np.ndarray:
        rows, tries = [], 0
        while sum(len(r) for r in rows) < n and tries < 50:
            columns = []
            for key, low, high in parsed:
                cut = high - ood_fraction * (high - low)
                lo, hi = (
                    (low, high)
                    if key != ood_variable or top is None
                    else ((cut, high) if top else (low, cut))
                )
                columns.append(rng.uniform(lo, hi, n))
            X = np.column_stack(columns)
            y = evaluate_expression(expression, names, X)
            keep = np.isfinite(y)
            rows.append(np.column_stack([y, X])[keep])
            tries += 1
        stacked = np.vstack(rows)
        if len(stacked) < n:
            raise EquationInputError(
                f"--equation is not real on enough points of the ranges ({len(stacked)} of {n})"
            )
        return stacked[:n]

    ood = ood_variable is not None
    inside = draw(n_train + n_test, False if ood else None)
    samples = {"train": inside[:n_train], "test": inside[n_train:]}
    if ood:
        samples["ood_test"] = draw(n_test, True)
    problem = Problem(
        name=name or Path(output).name,
        symbols=[left, *names],
        symbol_descs=[left, *names],
        symbol_properties=["O"] + ["V"] * len(names),
        expression=str(expression),
        samples=samples,
        family="user",
        description=f"{left} = {right}; ranges {', '.join(ranges)}",
    )
    write_problem(problem, output)
    return problem
