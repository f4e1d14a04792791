"""`icml25 rationalize`: token rationales of your own labelled text table (Parquet or CSV) as a Parquet table.

A value out of range stops with one line naming the option and exit status 2 (`own_data.check_options`); a
selected share off the target by more than the stated tolerance is printed as a warning on stderr."""

from __future__ import annotations

import argparse
import json
import sys


def _rationalize(args: argparse.Namespace) -> None:
    from stages.methods.rationale.own_data import rationalize_file

    summary = rationalize_file(
        args.input,
        args.output,
        text_column=args.text_column,
        label_column=args.label_column,
        objective=args.objective,
        sparsity=args.sparsity,
        epochs=args.epochs,
        max_len=args.max_len,
        dev_fraction=args.dev_fraction,
        seed=args.seed,
    )
    print(json.dumps(summary, indent=2))
    for warning in summary["warnings"]:
        print(f"warning: {warning}", file=sys.stderr)


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add `rationalize` to the `icml25` parser."""
    sub = commands.add_parser(
        "rationalize", help="select token rationales of your labelled texts (RNP / A2I)"
    )
    sub.add_argument(
        "--input", required=True, help="Parquet or CSV table with a text and a two-valued label column"
    )
    sub.add_argument("--output", required=True, help="Parquet table of selected spans (one row per span)")
    sub.add_argument("--text-column", default="text")
    sub.add_argument("--label-column", default="label")
    sub.add_argument("--objective", default="a2i", choices=("a2i", "rnp"))
    sub.add_argument(
        "--sparsity", type=float, default=0.15, help="target share of selected tokens, in (0, 1)"
    )
    sub.add_argument("--epochs", type=int, default=10, help="passes over the training rows, at least 1")
    sub.add_argument("--max-len", type=int, default=128, help="tokens kept per text, at least 1")
    sub.add_argument(
        "--dev-fraction",
        type=float,
        default=0.2,
        help="share of rows held out for accuracy and attack success, in (0, 1)",
    )
    sub.add_argument("--seed", type=int, default=0, help="at least 0")
    sub.set_defaults(handler=_rationalize)
