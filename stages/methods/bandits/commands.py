"""`icml25 bandit`: run a registered bandit algorithm on your own arm matrix."""

from __future__ import annotations

import argparse
import json


def _bandit(args: argparse.Namespace) -> None:
    from stages.core.params import parse_override
    from stages.methods.bandits.own_data import parse_theta, read_arms, run_bandit, write_run

    options = {}
    for text in args.option:
        key, value = parse_override(text)
        options[".".join(key)] = value
    arms = read_arms(args.arms, args.feature_columns.split(",") if args.feature_columns else None)
    theta = parse_theta(args.theta)
    theta_source = args.theta if args.theta.endswith(".json") else "--theta"
    run = run_bandit(
        arms, theta, args.horizon, args.algorithm, options, args.seed, args.noise_sd, args.arms, theta_source
    )
    files = write_run(run, args.output, args.arms)
    print(json.dumps({key: run.summary[key] for key in ("algorithm", "final_regret", "batches")}, indent=2))
    print("wrote " + ", ".join(str(path) for path in files))


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add `bandit` to the `icml25` parser."""
    sub = commands.add_parser("bandit", help="run a batched linear bandit algorithm on your own arm matrix")
    sub.add_argument("--arms", required=True, help="Parquet table, one row per arm (numeric feature columns)")
    sub.add_argument("--theta", required=True, help="θ as 'a,b,c' or a .json file with a list of d numbers")
    sub.add_argument("--horizon", required=True, type=int, help="T, number of pulls")
    sub.add_argument("--algorithm", default="blae", help="blae, phaelimd, e4, rs_oful, linucb")
    sub.add_argument("--option", action="append", default=[], help="algorithm option KEY=VALUE")
    sub.add_argument("--feature-columns", help="comma-separated (default: every numeric column)")
    sub.add_argument("--seed", type=int, default=0)
    sub.add_argument("--noise-sd", type=float, default=1.0, help="σ of the Gaussian reward noise")
    sub.add_argument("--output", required=True, help="folder for trace.parquet, summary.json, report.md")
    sub.set_defaults(handler=_bandit)
