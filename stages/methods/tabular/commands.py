"""`icml25 synthesize`: a synthetic copy of your own table (Parquet or CSV) with a metrics report."""

from __future__ import annotations

import argparse
import json
import sys


def _synthesize(args: argparse.Namespace) -> None:
    from stages.methods.tabular.own_data import synthesize_file

    summary = synthesize_file(
        args.input,
        args.output,
        method=args.method,
        n_levels=args.n_levels,
        categorical=args.categorical.split(",") if args.categorical else [],
        target=args.target,
        seed=args.seed,
        report=args.report,
        test_fraction=args.test_fraction,
        id_columns=args.id_column.split(",") if args.id_column else [],
        keep_verbatim=args.keep_verbatim.split(",") if args.keep_verbatim else [],
    )
    print(json.dumps(summary, indent=2))
    for note in _notes(summary):
        print(note, file=sys.stderr)


def _notes(summary: dict) -> list[str]:
    """The summary's warnings and notes, repeated on stderr so they are not missed."""
    notes = [f"warning: {warning}" for warning in summary["warnings"]]
    if summary["decimal_columns_as_float"]:
        notes.append(
            f"note: Decimal column(s) synthesized as Float64: {', '.join(summary['decimal_columns_as_float'])}"
        )
    return notes


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add `synthesize` to the `icml25` parser."""
    sub = commands.add_parser("synthesize", help="synthesize a copy of your own table (TabSDS or a peer)")
    sub.add_argument(
        "--input",
        required=True,
        help="Parquet or CSV table (numeric, Decimal (read as float) and categorical columns)",
    )
    sub.add_argument("--output", required=True, help="where to write the synthetic table (.parquet or .csv)")
    sub.add_argument(
        "--method",
        default="tabsds",
        help="tabsds, tabsjppds, smote, additive_noise, gaussian_copula, ctgan, tvae, arf",
    )
    sub.add_argument(
        "--n-levels", type=int, default=30, help="TabSDS n_c (bins per column per shuffle round)"
    )
    sub.add_argument(
        "--categorical",
        help="comma-separated columns to treat as categories (numeric codes; or a near-unique or date string "
        "column you accept to see copied verbatim, as --keep-verbatim)",
    )
    sub.add_argument(
        "--keep-verbatim",
        help="comma-separated string columns that look like ids, e-mails, names (near-unique) or dates, to "
        "synthesize anyway as categories: their synthetic values are input values copied verbatim (refused "
        "unless named here, in --categorical, or left out with --id-column); the report gives every string "
        "column's verbatim share",
    )
    sub.add_argument(
        "--id-column",
        help="comma-separated row-id columns to leave out (an undeclared id-like numeric column, or a "
        "near-unique or date string column, is an error)",
    )
    sub.add_argument("--target", help="column to predict for the utility metric (optional)")
    sub.add_argument("--seed", type=int, default=0)
    sub.add_argument(
        "--report",
        help="Markdown report with the metrics, verbatim-copy shares and marginals figures of every column "
        "(<report>.marginals.png, -2.png, ... 12 columns a page)",
    )
    sub.add_argument(
        "--test-fraction",
        type=float,
        default=0.5,
        help="share of rows held out for the report's metrics, strictly between 0 and 1",
    )
    sub.set_defaults(handler=_synthesize)
