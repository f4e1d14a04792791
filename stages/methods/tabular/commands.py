"""`icml25 synthesize`: a synthetic copy of your own table (Parquet or CSV) with a metrics report."""

from __future__ import annotations

import argparse
import json


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
    )
    print(json.dumps(summary, indent=2))


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add `synthesize` to the `icml25` parser."""
    sub = commands.add_parser("synthesize", help="synthesize a copy of your own table (TabSDS or a peer)")
    sub.add_argument("--input", required=True, help="Parquet or CSV table (numeric and categorical columns)")
    sub.add_argument("--output", required=True, help="where to write the synthetic table (.parquet or .csv)")
    sub.add_argument(
        "--method",
        default="tabsds",
        help="tabsds, tabsjppds, smote, additive_noise, gaussian_copula, ctgan, tvae",
    )
    sub.add_argument(
        "--n-levels", type=int, default=30, help="TabSDS n_c (bins per column per shuffle round)"
    )
    sub.add_argument("--categorical", help="comma-separated numeric columns to treat as categories")
    sub.add_argument(
        "--id-column",
        help="comma-separated row-id columns to leave out (an undeclared id-like numeric column is an error)",
    )
    sub.add_argument("--target", help="column to predict for the utility metric (optional)")
    sub.add_argument("--seed", type=int, default=0)
    sub.add_argument(
        "--report", help="Markdown report with the metrics and a marginals figure (needs held-out rows)"
    )
    sub.add_argument(
        "--test-fraction", type=float, default=0.5, help="rows held out for the report's metrics"
    )
    sub.set_defaults(handler=_synthesize)
