"""Step `llm_srbench-problems`: the Feynman originals, their LSR-Transform forms and the LSR-Synth-style
problems, written in the benchmark's layout (one folder per problem) with an index and the transform funnel."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import write_json, write_parquet
from stages.core.seeding import derive_seed
from stages.methods.equations.feynman import FORMULAS, complexity, lsr_transform
from stages.methods.equations.problem import Problem, write_problem_files
from stages.methods.equations.synth import DOMAINS, synth_problem
from stages.papers.llm_srbench.params import LLMSRBenchParams, Scale


def build_problems(grid: Scale, seed: int) -> tuple[list[Problem], dict]:
    """Every problem of a scale (deterministic for a seed) and the LSR-Transform funnel counts."""
    chosen = [f for f in FORMULAS if grid.formulas is None or f.name in grid.formulas]
    rng = np.random.default_rng(derive_seed(seed, "llm_srbench", "transform"))
    originals, transformed, report = lsr_transform(
        chosen, grid.n_train, grid.n_test, grid.max_transforms_per_formula, rng
    )
    synthetic = []
    for domain in DOMAINS:
        for index in range(grid.synth_per_domain):
            rng = np.random.default_rng(derive_seed(seed, "llm_srbench", "synth", domain, index))
            synthetic.append(synth_problem(domain, index, grid.synth_points, grid.synth_train_fraction, rng))
    return [*originals, *transformed, *synthetic], asdict(report)


def index_frame(problems: list[Problem]) -> pl.DataFrame:
    """One row per problem: name, family, source, expression, node count, rows per split."""
    return pl.DataFrame(
        [
            {
                "problem": p.name,
                "family": p.family,
                "source": p.source,
                "expression": p.expression,
                "complexity": complexity(p.sympy_expression),
                "n_inputs": len(p.inputs),
                "n_train": len(p.samples["train"]),
                "n_test": len(p.samples["test"]),
                "n_ood": len(p.samples["ood_test"]) if p.has_ood else 0,
            }
            for p in problems
        ]
    )


def run(ctx: StepContext) -> None:
    params: LLMSRBenchParams = ctx.params
    problems, funnel = build_problems(params.grid, ctx.common.seed)
    folder = ctx.output("problems")
    for problem in problems:
        write_problem_files(problem, folder / problem.name)
    write_parquet(index_frame(problems), ctx.output("index"))
    write_json(funnel, ctx.output("funnel"))
    ctx.log(f"{len(problems)} problems; transform funnel {funnel}")
