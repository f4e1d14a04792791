"""`icml25 sr-eval` (score a hypothesis on a problem or your table) and `icml25 sr-problem` (write your
equation and ranges into the LLM-SRBench problem layout)."""

from __future__ import annotations

import argparse
import json


def _sr_eval(args: argparse.Namespace) -> None:
    from stages.methods.equations.own_data import sr_eval

    report = sr_eval(
        args.output,
        problem=args.problem,
        data=args.data,
        target=args.target,
        truth=args.truth,
        ood=args.ood,
        expression=args.expression,
        predictions=args.predictions,
        tau=args.tau,
        seed=args.seed,
    )
    print(json.dumps(report, indent=2))


def _sr_problem(args: argparse.Namespace) -> None:
    from stages.methods.equations.own_data import sr_problem

    problem = sr_problem(
        args.equation,
        args.range or [],
        args.output,
        n_train=args.n_train,
        n_test=args.n_test,
        ood_variable=args.ood_variable,
        ood_fraction=args.ood_fraction,
        seed=args.seed,
        name=args.name,
    )
    sizes = {split: len(rows) for split, rows in problem.samples.items()}
    print(
        json.dumps(
            {"problem": problem.name, "expression": problem.expression, "rows": sizes, "folder": args.output},
            indent=2,
        )
    )


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add `sr-eval` and `sr-problem` to the `icml25` parser."""
    sub = commands.add_parser(
        "sr-eval", help="score an equation (or predictions) by NMSE, Acc_tau, symbolic accuracy"
    )
    sub.add_argument("--problem", help="a problem folder (problem.json + train/test[/ood_test].parquet)")
    sub.add_argument("--data", help="or your own table (.parquet/.csv): --target column + numeric inputs")
    sub.add_argument("--target", help="with --data: the output column")
    sub.add_argument("--truth", help="with --data: the ground-truth expression (enables symbolic accuracy)")
    sub.add_argument("--ood", help="with --data: an out-of-domain table with the same columns")
    sub.add_argument("--expression", help="the hypothesis over the input names, e.g. '2.1*m*g*z'")
    sub.add_argument(
        "--predictions", help="or a table with a 'prediction' column (and 'split': test/ood_test)"
    )
    sub.add_argument("--tau", type=float, default=0.1, help="Acc_tau threshold on the max relative error")
    sub.add_argument("--seed", type=int, default=0, help="seed of the fresh points of the SA check")
    sub.add_argument("--output", required=True, help="folder for report.json and report.md")
    sub.set_defaults(handler=_sr_eval)

    sub = commands.add_parser(
        "sr-problem", help="write your equation and input ranges as a benchmark problem"
    )
    sub.add_argument("--equation", required=True, help="'y = expression', e.g. 'F = q1*q2/(4*pi*eps*r**2)'")
    sub.add_argument("--range", action="append", help="name=low:high, once per input (uniform sampling)")
    sub.add_argument("--n-train", type=int, default=1000)
    sub.add_argument("--n-test", type=int, default=500)
    sub.add_argument(
        "--ood-variable", help="hold out the top --ood-fraction of this input's range as ood_test"
    )
    sub.add_argument("--ood-fraction", type=float, default=0.1)
    sub.add_argument("--seed", type=int, default=0)
    sub.add_argument("--name", help="problem name (default: the output folder's name)")
    sub.add_argument("--output", required=True, help="the problem folder to write")
    sub.set_defaults(handler=_sr_problem)
