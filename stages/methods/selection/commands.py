"""`icml25 select` and `icml25 validate`: core-set selection and validation on your own Parquet table."""

from __future__ import annotations

import argparse
import json


def _table_params(args: argparse.Namespace):
    from stages.core.params import parse_override, validate_section
    from stages.methods.selection.table_selection import TableSelectionParams

    options = {}
    for text in args.option:
        key, value = parse_override(text)
        options[".".join(key)] = value
    raw = {
        "input": args.input,
        "label_column": args.label_column,
        "feature_columns": args.feature_columns.split(",") if args.feature_columns else None,
        "id_column": args.id_column,
        "method": args.method,
        "options": options,
        "budget": args.budget,
        "seed": args.seed,
        "feature_space": args.feature_space,
        "trace": {"epochs": args.trace_epochs},
    }
    return validate_section(TableSelectionParams, raw, "select", source="command line")


def _select(args: argparse.Namespace) -> None:
    from stages.core.io import read_parquet, write_parquet
    from stages.methods.selection.table_selection import select_from_table

    selection = select_from_table(read_parquet(args.input), _table_params(args), args.input)
    write_parquet(selection.chosen, args.output)
    print(json.dumps(selection.summary, indent=2))


def _validate(args: argparse.Namespace) -> None:
    from stages.core.io import read_parquet, write_json
    from stages.core.validate import ensure_valid
    from stages.datasets.classification import classification_schema
    from stages.methods.selection.table_selection import as_classification_table

    table = as_classification_table(read_parquet(args.input), _table_params(args), args.input)
    report = ensure_valid(table, classification_schema(), args.input)
    if args.report:
        write_json(report.to_dict(), args.report)
    print(f"{args.input}: {report.rows} rows passed {len(report.results)} expectations")


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add `select` and `validate` to the `icml25` parser."""
    for name, handler, text in (
        ("select", _select, "select a core-set from your own Parquet table"),
        ("validate", _validate, "validate your own Parquet classification table"),
    ):
        sub = commands.add_parser(name, help=text)
        sub.add_argument("--input", required=True, help="Parquet table")
        sub.add_argument("--label-column", default="label")
        sub.add_argument("--feature-columns", help="comma-separated (default: every other numeric column)")
        sub.add_argument("--id-column")
        sub.set_defaults(
            handler=handler,
            method="random",
            budget=0.3,
            seed=0,
            option=[],
            feature_space="raw",
            trace_epochs=10,
        )
        if name == "select":
            sub.add_argument(
                "--output", required=True, help="Parquet file for the chosen sample_id/label rows"
            )
            sub.add_argument(
                "--method", default="mrmc", help="random, mrmc, herding, kcenter, el2n, forgetting"
            )
            sub.add_argument("--budget", type=float, default=0.3, help="fraction of the pool to keep")
            sub.add_argument("--seed", type=int, default=0)
            sub.add_argument("--option", action="append", default=[], help="selector option KEY=VALUE")
            sub.add_argument("--feature-space", choices=["embedding", "raw"], default="embedding")
            sub.add_argument("--trace-epochs", type=int, default=10)
        else:
            sub.add_argument("--report", help="write the validation report JSON here")
