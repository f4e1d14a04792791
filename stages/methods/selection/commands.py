"""`icml25 select` and `icml25 validate`: core-set selection and validation on your own Parquet table.

`select` sweeps: `--method`, `--budget` and `--seed` each take a comma-separated list (or repeat), and every
(method, budget, seed) is one run. Models are trained once per trace seed and shared by every method and
budget; `random` (and any selector on `--feature-space raw` or a saved `--embedding`) trains nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from stages.core.errors import ParamsError


def _split(values: list[str], convert: type, flag: str) -> list:
    items = [item.strip() for text in values for item in text.split(",") if item.strip()]
    try:
        converted = [convert(item) for item in items]
    except ValueError:
        raise ParamsError(
            f"{flag}: expected comma-separated {convert.__name__} values, got {values!r}"
        ) from None
    if len(set(converted)) != len(converted):
        raise ParamsError(f"{flag}: a value is repeated in {values!r}")
    return converted


def _options(texts: list[str], methods: list[str]) -> dict[str, dict[str, Any]]:
    """`KEY=VALUE` applies to every method; `METHOD.KEY=VALUE` to that method only."""
    from stages.core.params import parse_override

    options: dict[str, dict[str, Any]] = {method: {} for method in methods}
    for text in texts:
        key, value = parse_override(text)
        if len(key) > 1 and key[0] in options:
            options[key[0]][".".join(key[1:])] = value
        elif len(key) > 1 and key[0] not in options and len(methods) > 1:
            raise ParamsError(
                f"--option {text}: '{key[0]}' is not one of the methods asked for ({', '.join(methods)})"
            )
        else:
            for method in methods:
                options[method][".".join(key)] = value
    return options


def _lists(args: argparse.Namespace) -> tuple[list[str], list[float], list[int]]:
    methods = _split(args.method or ["mrmc"], str, "--method")
    budgets = _split(args.budget or ["0.3"], float, "--budget")
    seeds = _split(args.seed or ["0"], int, "--seed")
    return methods, budgets, seeds


def _table_params(args: argparse.Namespace):
    """The single-run params (first method, budget and seed); every listed value is checked the same way."""
    from stages.core.params import validate_section
    from stages.methods.selection.table_selection import TableSelectionParams

    methods, budgets, seeds = _lists(args)
    raw = {
        "input": args.input,
        "label_column": args.label_column,
        "feature_columns": args.feature_columns.split(",") if args.feature_columns else None,
        "id_column": args.id_column,
        "method": methods[0],
        "options": _options(args.option, methods)[methods[0]],
        "budget": budgets[0],
        "seed": seeds[0],
        "feature_space": args.feature_space,
        "trace": {"epochs": args.trace_epochs},
    }
    params = validate_section(TableSelectionParams, raw, "select", source="command line")
    for budget in budgets[1:]:
        validate_section(TableSelectionParams, {**raw, "budget": budget}, "select", source="--budget")
    for seed in seeds[1:]:
        validate_section(TableSelectionParams, {**raw, "seed": seed}, "select", source="--seed")
    return params


def _plan(args: argparse.Namespace):
    from stages.methods.selection.table_selection import SweepPlan

    methods, budgets, seeds = _lists(args)
    return SweepPlan(
        tuple(methods), tuple(budgets), tuple(seeds), _options(args.option, methods), args.trace_seed
    )


def _run_file(run) -> str:
    return f"{run.method}-b{run.budget:g}-s{run.seed}.parquet"


def _select(args: argparse.Namespace) -> None:
    from stages.core.io import OutputTransaction, read_parquet, write_json, write_parquet
    from stages.methods.selection.table_selection import sweep_table

    params, plan = _table_params(args), _plan(args)
    output = Path(args.output)
    single = len(plan.methods) * len(plan.budgets) * len(plan.seeds) == 1
    single = single and not (args.output.endswith("/") or output.is_dir())  # a folder gets the sweep layout
    if not single and output.suffix == ".parquet":
        raise ParamsError(f"--output {output}: a sweep writes one file per run; give a folder")
    embedding = read_parquet(args.embedding) if args.embedding else None
    result = sweep_table(
        read_parquet(args.input),
        params,
        plan,
        args.input,
        embedding=embedding,
        embedding_source=args.embedding or "embedding",
        with_scores=bool(args.scores_out),
        need_embeddings=bool(args.embedding_out),
    )
    report = result.report(args.input)
    report_path = Path(args.report) if args.report else (None if single else output / "report.json")
    root = output.parent if single else output
    root.mkdir(parents=True, exist_ok=True)
    with OutputTransaction(root, owner="icml25 select") as transaction:
        for run in result.runs:
            target = output if single else output / _run_file(run)
            run.summary["output"] = str(target)
            write_parquet(run.chosen, transaction.path(target))
        if report_path:
            write_json(report, transaction.path(report_path))
        if args.scores_out:
            write_parquet(result.scores, transaction.path(args.scores_out))
        if args.embedding_out:
            write_parquet(result.embeddings, transaction.path(args.embedding_out))
    for run in result.runs:
        for warning in run.summary["warnings"]:
            print(f"warning: {run.method} budget {run.budget:g} seed {run.seed}: {warning}", file=sys.stderr)
    print(json.dumps(report, indent=2, default=str))


def _validate(args: argparse.Namespace) -> None:
    from stages.core.io import read_parquet, write_json
    from stages.core.validate import ensure_valid
    from stages.datasets.classification import classification_schema
    from stages.methods.selection.table_selection import read_table

    table, description, _ = read_table(read_parquet(args.input), _table_params(args), args.input)
    report = ensure_valid(table, classification_schema(), args.input)
    if args.report:
        write_json({**report.to_dict(), **description}, args.report)
    columns, labels = description["columns"], description["labels"]
    print(f"{args.input}: {report.rows} rows passed {len(report.results)} expectations")
    print(f"  label column: {columns['label_column']}; id column: {columns['id_column'] or '(row number)'}")
    names = columns["feature_columns"]
    shown = names if len(names) <= 12 else [*names[:6], f"… {len(names) - 12} more …", *names[-6:]]
    print(f"  {columns['n_features']} feature column(s): {', '.join(shown)}")
    print(f"  labels (raw → internal): {labels['raw_to_internal']}")
    for note in labels["notes"]:
        print(f"  note: {note}")


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add `select` and `validate` to the `icml25` parser."""
    for name, handler, text in (
        (
            "select",
            _select,
            "select core-sets (a sweep of methods × budgets × seeds) from your own Parquet table",
        ),
        ("validate", _validate, "validate your own Parquet classification table"),
    ):
        sub = commands.add_parser(name, help=text)
        sub.add_argument("--input", required=True, help="Parquet table")
        sub.add_argument("--label-column", default="label")
        sub.add_argument(
            "--feature-columns",
            help="comma-separated (default: every other numeric column; an id-like one is an error)",
        )
        sub.add_argument("--id-column", help="column of unique sample ids (default: the row number)")
        sub.set_defaults(
            handler=handler,
            method=None,
            budget=None,
            seed=None,
            option=[],
            feature_space="raw",
            trace_epochs=10,
        )
        if name == "select":
            _add_select_arguments(sub)
        else:
            sub.add_argument("--report", help="write the validation report JSON here")


def _add_select_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--output",
        required=True,
        help="Parquet file of the chosen sample_id/label rows; for a sweep (or a path ending in /), a folder "
        "of METHOD-bBUDGET-sSEED.parquet files plus report.json",
    )
    sub.add_argument(
        "--method",
        action="append",
        help="random, mrmc, herding, kcenter, el2n, forgetting; comma-separated or repeated (default: mrmc)",
    )
    sub.add_argument(
        "--budget", action="append", help="fraction(s) of the pool to keep, comma-separated (default: 0.3)"
    )
    sub.add_argument("--seed", action="append", help="seed(s), comma-separated (default: 0)")
    sub.add_argument(
        "--option",
        action="append",
        default=[],
        help="selector option KEY=VALUE (every method) or METHOD.KEY=VALUE (one method)",
    )
    sub.add_argument("--feature-space", choices=["embedding", "raw"], default="embedding")
    sub.add_argument("--trace-epochs", type=int, default=10)
    sub.add_argument(
        "--trace-seed",
        type=int,
        help="train one model with this seed for every selection seed (default: one model per seed)",
    )
    sub.add_argument("--report", help="write the report JSON here (a sweep writes OUTPUT/report.json anyway)")
    sub.add_argument("--scores-out", help="Parquet file of per-sample scores of the trained model(s)")
    sub.add_argument(
        "--embedding",
        help="Parquet file of a saved feature space (sample_id, array column embedding, optional seed), "
        "used instead of training for --feature-space embedding",
    )
    sub.add_argument("--embedding-out", help="write the trained embeddings here (readable by --embedding)")
