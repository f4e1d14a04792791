"""`icml25 rationalize`: token rationales of your own labelled text table (Parquet or CSV) as a Parquet table."""

from __future__ import annotations

import argparse
import json


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
    sub.add_argument("--sparsity", type=float, default=0.15, help="target share of selected tokens")
    sub.add_argument("--epochs", type=int, default=10)
    sub.add_argument("--max-len", type=int, default=128, help="tokens kept per text")
    sub.add_argument(
        "--dev-fraction", type=float, default=0.2, help="rows held out for accuracy and attack success"
    )
    sub.add_argument("--seed", type=int, default=0)
    sub.set_defaults(handler=_rationalize)
