"""`icml25 bandit`: run a registered bandit algorithm on your own arm matrix."""

from __future__ import annotations

import argparse
import json
import sys


def _notes(summary: dict) -> list[str]:
    """What the run changed or ignored in the user's file, said on stderr as well as in the report."""
    notes = []
    if summary["duplicate_arms_dropped"]:
        notes.append(
            f"{summary['duplicate_arms_dropped']} duplicate arm(s) (identical rows) dropped; "
            f"{summary['distinct_arms']} distinct arms played"
        )
    if summary["columns_left_out"]:
        notes.append(
            f"columns left out (not numeric or not listed): {', '.join(summary['columns_left_out'])}"
        )
    return notes


def _bandit(args: argparse.Namespace) -> None:
    from stages.core.params import parse_override
    from stages.methods.bandits.own_data import (
        check_run_settings,
        parse_theta,
        read_arm_table,
        run_bandit,
        write_run,
    )

    options = {}
    for text in args.option:
        key, value = parse_override(text)
        options[".".join(key)] = value
    check_run_settings(args.horizon, args.seed, args.noise_sd)
    columns = [name.strip() for name in args.feature_columns.split(",")] if args.feature_columns else None
    table = read_arm_table(args.arms, columns)
    theta = parse_theta(args.theta)
    theta_source = args.theta if args.theta.endswith(".json") else "--theta"
    run = run_bandit(
        table.arms,
        theta,
        args.horizon,
        args.algorithm,
        options,
        args.seed,
        args.noise_sd,
        args.arms,
        theta_source,
        columns=table.columns,
        left_out=table.dropped,
    )
    files = write_run(run, args.output, args.arms)
    keys = ("algorithm", "final_regret", "batches", "duplicate_arms_dropped", "columns_left_out")
    print(json.dumps({key: run.summary[key] for key in keys}, indent=2))
    for note in _notes(run.summary):
        print(f"note: {note}", file=sys.stderr)
    print("wrote " + ", ".join(str(path) for path in files))


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add `bandit` to the `icml25` parser."""
    sub = commands.add_parser("bandit", help="run a batched linear bandit algorithm on your own arm matrix")
    sub.add_argument(
        "--arms",
        required=True,
        help="Parquet table, one row per arm (numeric feature columns; identical rows are one arm)",
    )
    sub.add_argument(
        "--theta",
        required=True,
        help="θ: exactly d finite numbers, as 'a,b,c', '[a, b, c]' or a .json file holding such a list",
    )
    sub.add_argument("--horizon", required=True, type=int, help="T, number of pulls (1 … 10⁷)")
    sub.add_argument("--algorithm", default="blae", help="blae, phaelimd, e4, rs_oful, linucb")
    sub.add_argument("--option", action="append", default=[], help="algorithm option KEY=VALUE")
    sub.add_argument("--feature-columns", help="comma-separated (default: every numeric column)")
    sub.add_argument("--seed", type=int, default=0, help="0 … 2³²−1")
    sub.add_argument("--noise-sd", type=float, default=1.0, help="σ of the Gaussian reward noise")
    sub.add_argument("--output", required=True, help="folder for trace.parquet, summary.json, report.md")
    sub.set_defaults(handler=_bandit)
