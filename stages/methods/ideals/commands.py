"""`icml25 vanishing-ideals`: generators per class and a VI-Net head on your own embeddings table."""

from __future__ import annotations

import argparse
import json


def _vanishing_ideals(args: argparse.Namespace) -> None:
    from stages.methods.ideals.own_data import OwnDataOptions, vanishing_ideals_file

    options = OwnDataOptions(
        label=args.label,
        columns=args.columns,
        pca=args.pca,
        psi=args.psi,
        max_degree=args.max_degree,
        oracle=args.oracle,
        max_points=args.max_points,
        keep=args.keep,
        epochs=args.epochs,
        test_fraction=args.test_fraction,
        seed=args.seed,
    )
    report = vanishing_ideals_file(args.input, args.output, options)
    print(json.dumps({"output": args.output, "accuracy": report["accuracy"]}, indent=2))


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add `vanishing-ideals` to the `icml25` parser."""
    sub = commands.add_parser(
        "vanishing-ideals",
        help="VI-Net on your embeddings: vanishing-ideal generators per class, a polynomial layer and a head",
    )
    sub.add_argument(
        "--input", required=True, help="Parquet or CSV: one row per item, numeric embedding columns"
    )
    sub.add_argument("--label", required=True, help="the label column (integers or strings)")
    sub.add_argument("--output", required=True, help="folder for the report, generators and figures")
    sub.add_argument(
        "--columns", nargs="+", help="embedding columns (default: every numeric column but the label)"
    )
    sub.add_argument("--pca", type=int, default=12, help="PCA components before tanh (≤ the embedding width)")
    sub.add_argument("--psi", type=float, default=0.002, help="vanishing tolerance ψ (mean p² on the class)")
    sub.add_argument("--max-degree", type=int, default=3)
    sub.add_argument("--oracle", choices=("abm", "oavi"), default="abm")
    sub.add_argument("--max-points", type=int, default=1000, help="points per class the generators see")
    sub.add_argument("--keep", type=int, default=20, help="generators kept per class (highest s(p))")
    sub.add_argument("--epochs", type=int, default=3, help="head fine-tuning epochs")
    sub.add_argument(
        "--test-fraction", type=float, default=0.2, help="rows held out (stratified) for accuracy"
    )
    sub.add_argument("--seed", type=int, default=0)
    sub.set_defaults(handler=_vanishing_ideals)
