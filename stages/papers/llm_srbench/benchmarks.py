"""LLM-SRBench benchmarks (`icml25 bench llm_srbench`), on one BLAS thread:

- evaluation throughput: problems scored per second (NMSE ID/OOD, Acc_τ, symbolic accuracy) on the oracle's
  and on the data-blind baseline's answers;
- searcher wall time per problem: gplearn, the LLM-SR-style loop and the data-blind baseline on the same
  problems, interleaved in a seeded random order, median of repeats, ratios to the data-blind baseline;
- our NMSE against the official repository's `compute_output_base_metrics` (bench/pipelines.py of
  deep-symbolic-mathematics/llm-srbench) on the same predictions, NaN predictions included. The official
  function is read from a checkout outside this repository (`LLM_SRBENCH_OFFICIAL`: a path to its
  bench/pipelines.py, or a bare git mirror at `LLM_SRBENCH_MIRROR`) and run beside ours; skipped with a reason
  when neither is present. Acc_τ is not in the official code (its issue #4), so only NMSE is compared.

Writes reports/benchmarks/llm_srbench.{json,png}.
"""

from __future__ import annotations

import ast
import os
import statistics
import subprocess
import time
from pathlib import Path

import numpy as np

from stages.core.io import write_json
from stages.core.metrics import new_figure, save_figure
from stages.core.timing import interleaved_seconds
from stages.methods.equations.metrics import accuracy_tau, nmse, symbolic_accuracy
from stages.methods.equations.searchers import (
    DataBlindSearcher,
    GPLearnSearcher,
    LLMSRSearcher,
    OracleSearcher,
)
from stages.papers.llm_srbench.params import Scale
from stages.papers.llm_srbench.problems import build_problems

RESULTS_DIR = Path("reports/benchmarks")
DEFAULT_MIRROR = "/work/.mirror/deep-symbolic-mathematics+llm-srbench/repo"


def _problems(count: int):
    grid = Scale(formulas=["I.12.2", "I.14.3", "I.34.8", "II.38.14"], synth_per_domain=1)
    problems, _ = build_problems(grid, 0)
    return problems[:count]


def bench_evaluation(problems) -> dict:
    """Problems scored per second on two searchers' answers (the SA stand-in dominates)."""
    out = {}
    for searcher in (OracleSearcher(), DataBlindSearcher()):
        answers = [(p, searcher.search(p, 0)) for p in problems]
        start = time.perf_counter()
        for problem, result in answers:
            for split in ("test", "ood_test") if problem.has_ood else ("test",):
                X, y = problem.split(split)
                prediction = result.predict(X)
                nmse(y, prediction), accuracy_tau(y, prediction)
            symbolic_accuracy(result.expression, problem, np.random.default_rng(0))
        seconds = time.perf_counter() - start
        out[searcher.name] = {
            "problems": len(answers),
            "seconds": round(seconds, 4),
            "problems_per_second": round(len(answers) / seconds, 3),
        }
    return out


def bench_searchers(problems, repeats: int) -> dict:
    """Median wall seconds per problem of each searcher, interleaved in a seeded random order."""
    searchers = {s.name: s for s in (GPLearnSearcher(), LLMSRSearcher(), DataBlindSearcher())}

    def runner(name: str):
        def call() -> None:
            for problem in problems:
                searchers[name].search(problem, 1)

        return call

    seconds = interleaved_seconds({name: runner(name) for name in searchers}, repeats, warmup=False)
    per_problem = {name: statistics.median(values) / len(problems) for name, values in seconds.items()}
    return {
        "problems": len(problems),
        "repeats": repeats,
        "median_seconds_per_problem": {k: round(v, 4) for k, v in per_problem.items()},
        "ratio_to_data_blind": {k: round(v / per_problem["data_blind"], 2) for k, v in per_problem.items()},
    }


def official_source() -> tuple[str | None, str]:
    """The official bench/pipelines.py text and where it came from (None and a reason when absent)."""
    path = os.environ.get("LLM_SRBENCH_OFFICIAL")
    if path and Path(path).is_file():
        return Path(path).read_text(), path
    mirror = os.environ.get("LLM_SRBENCH_MIRROR", DEFAULT_MIRROR)
    if Path(mirror).exists():
        shown = subprocess.run(
            ["git", "--git-dir", mirror, "show", "HEAD:bench/pipelines.py"], capture_output=True, text=True
        )
        if shown.returncode == 0:
            commit = subprocess.run(
                ["git", "--git-dir", mirror, "rev-parse", "HEAD"], capture_output=True, text=True
            ).stdout.strip()
            return shown.stdout, f"{mirror} @ {commit}"
    return None, "no official checkout: set LLM_SRBENCH_OFFICIAL to its bench/pipelines.py"


def official_metrics_function(source: str):
    """The official `compute_output_base_metrics`, compiled alone from its module's text (its package imports
    — the searchers, the dataclasses — are not needed by it)."""
    from scipy.stats import kendalltau
    from sklearn.metrics import mean_absolute_percentage_error

    tree = ast.parse(source)
    node = next(
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "compute_output_base_metrics"
    )
    namespace = {
        "np": np,
        "kendalltau": kendalltau,
        "mean_absolute_percentage_error": mean_absolute_percentage_error,
    }
    exec(compile(ast.Module(body=[node], type_ignores=[]), "official:bench/pipelines.py", "exec"), namespace)
    return namespace["compute_output_base_metrics"]


def bench_official(problems) -> dict:
    """Our NMSE vs the official function on the same predictions (searchers' answers, with NaNs injected)."""
    source, origin = official_source()
    if source is None:
        return {"skipped": origin}
    official = official_metrics_function(source)
    rng = np.random.default_rng(0)
    differences = []
    cases = 0
    for problem in problems:
        for searcher in (DataBlindSearcher(), LLMSRSearcher(proposals=8)):
            result = searcher.search(problem, 0)
            for split in ("test", "ood_test") if problem.has_ood else ("test",):
                X, y = problem.split(split)
                prediction = result.predict(X).copy()
                for with_nan in (False, True):
                    if with_nan:
                        prediction[rng.choice(len(y), size=max(1, len(y) // 20), replace=False)] = np.nan
                    ours = nmse(y, prediction)
                    theirs = float(official(prediction.copy(), y.copy())["nmse"])
                    differences.append(abs(ours - theirs) / max(abs(theirs), 1e-300))
                    cases += 1
    return {
        "origin": origin,
        "cases": cases,
        "max_relative_difference": float(max(differences)),
        "within_1e-12": bool(max(differences) <= 1e-12),
    }


def plot(results: dict, path: Path) -> None:
    figure, (left, right) = new_figure(9, 3.6, ncols=2)
    timing = results["searchers"]["median_seconds_per_problem"]
    left.bar(list(timing), list(timing.values()))
    left.set_yscale("log")
    left.set_ylabel("median seconds per problem")
    left.set_title("searcher wall time (1 thread)", fontsize=9)
    rates = results["evaluation"]
    right.bar(list(rates), [v["problems_per_second"] for v in rates.values()])
    right.set_ylabel("problems scored per second")
    right.set_title("evaluation throughput (NMSE, Acc, SA)", fontsize=9)
    save_figure(figure, path)


def run_llm_srbench_benchmarks(root: str | Path = ".", repeats: int = 3) -> dict:
    """Run the three benchmarks on one BLAS thread; write reports/benchmarks/llm_srbench.{json,png}."""
    from threadpoolctl import threadpool_limits

    root = Path(root)
    problems = _problems(8)
    with threadpool_limits(1):
        results = {
            "threads": 1,
            "evaluation": bench_evaluation(problems),
            "searchers": bench_searchers(problems, repeats),
            "official_nmse": bench_official(problems),
        }
    write_json(results, root / RESULTS_DIR / "llm_srbench.json")
    plot(results, root / RESULTS_DIR / "llm_srbench.png")
    return results
