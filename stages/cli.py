"""The `icml25` command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from stages.core.dvc_cli import OFFLINE_ENV
from stages.core.errors import PipelineError


def _stage(args: argparse.Namespace) -> None:
    from stages.pipelines import run_stage

    run_stage(args.name, args.params)


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


def _audit_graphs(args: argparse.Namespace) -> None:
    from stages.core.params import apply_overrides, validate_section
    from stages.datasets.graphs.table import read_graph_tables
    from stages.datasets.graphs.tu_format import load_tu_dataset
    from stages.methods.graphs.audit import AuditConfig
    from stages.methods.graphs.standalone import audit_graph_datasets

    if bool(args.tu) == bool(args.tables):
        raise PipelineError("audit-graphs: give exactly one of --tu FOLDER (with --name) or --tables FOLDER")
    if args.tu and not args.name:
        raise PipelineError("audit-graphs: --tu needs --name, the TU dataset name (files <name>_A.txt, ...)")
    folder = Path(args.tu or args.tables)
    name = (args.name or folder.name).lower()
    tables = load_tu_dataset(folder, args.name) if args.tu else read_graph_tables(folder)
    raw = apply_overrides({"workers": args.workers, "seeds": list(range(args.seeds))}, args.set)
    config = validate_section(AuditConfig, raw, "audit", source="command line")
    report = audit_graph_datasets({name: tables}, config, args.seed, args.output)
    print(report.read_text())
    print(f"report: {report}")


def _papers(args: argparse.Namespace) -> None:
    from stages.papers.registry import PAPERS

    for paper_id in PAPERS.names():
        paper = PAPERS.get(paper_id)
        stages = ", ".join(paper.pipeline.stage_name(step) for step in paper.pipeline.steps)
        print(f"{paper_id:12} {paper.title}\n{'':12} stages: {stages}")


def _claims(args: argparse.Namespace) -> None:
    from stages.core.claims import read_claims
    from stages.papers.registry import PAPERS
    from stages.report import claims_table

    found = {
        pid: read_claims(PAPERS.get(pid).claims_path)
        for pid in PAPERS.names()
        if Path(PAPERS.get(pid).claims_path).is_file()
    }
    if not found:
        raise PipelineError("no claims.json found yet: run `make repro` (or `dvc repro`) first")
    print(claims_table(found))


def _smoke(args: argparse.Namespace) -> None:
    from stages.smoke import run_smoke

    workdir = run_smoke(targets=args.targets, workdir=args.workdir)
    print(f"smoke run finished in {workdir}")


def _run(args: argparse.Namespace) -> None:
    from stages.experiments import run_experiment

    result = run_experiment(args.paper, args.set, args.name, args.workspace)
    print(f"experiment {result.name} ({result.rev}) — `icml25 audit {args.paper} --exp {result.name}`")


def _audit(args: argparse.Namespace) -> None:
    from stages.audit import audit_markdown, audit_record, diff_markdown

    if args.diff:
        first, second = (audit_record(args.paper, run, args.workspace) for run in args.diff)
        text = diff_markdown(first, second)
    else:
        text = audit_markdown(audit_record(args.paper, args.exp or "workspace", args.workspace))
    if args.output:
        from stages.core.io import write_text

        write_text(text, args.output)
    print(text)


def _all_papers(args: argparse.Namespace) -> None:
    from flows.experiment_flow import run_all_papers

    sweep = [[item.strip() for item in text.split(";") if item.strip()] for text in args.sweep] or None
    names = run_all_papers(args.paper, sweep, args.workspace, args.dask_address)
    print("experiments: " + ", ".join(names))


def _serve(args: argparse.Namespace) -> None:
    from flows import serve

    if args.stop:
        print("stopped" if serve.stop(args.workspace) else "no `icml25 serve` running for this workspace")
        return
    serve.serve(args.port, args.workspace)


def _bench(args: argparse.Namespace) -> None:
    if args.orchestration:
        from flows.benchmarks import run_orchestration_benchmarks

        print(json.dumps(run_orchestration_benchmarks(), indent=2))
        return
    if args.selection:
        from stages.papers.dynamic_selection.benchmarks import run_selection_benchmarks

        print(json.dumps(run_selection_benchmarks(), indent=2))
        return
    if args.graphs:
        from stages.papers.rings.benchmarks import run_graph_benchmarks

        print(json.dumps(run_graph_benchmarks(), indent=2))
        return
    if args.annotation:
        from stages.papers.info_coevolution.benchmarks import run_annotation_benchmarks

        print(json.dumps(run_annotation_benchmarks(), indent=2))
        return
    from stages.benchmarks import run_benchmarks

    print(json.dumps(run_benchmarks(), indent=2))


def _flow(args: argparse.Namespace) -> None:
    from flows.paper_flow import run_paper_flow

    run_paper_flow(args.paper, workspace=args.workspace, force=args.force)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (subcommands)."""
    parser = argparse.ArgumentParser(prog="icml25", description="ICML 2025 papers as auditable DVC pipelines")
    commands = parser.add_subparsers(dest="command", required=True)

    stage = commands.add_parser("stage", help="run one dvc.yaml stage (what `dvc repro` calls)")
    stage.add_argument("name", help="stage name, e.g. mrmc-trace or data-fashion_mnist")
    stage.add_argument("--params", default="params.yaml")
    stage.set_defaults(handler=_stage)

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

    graphs = commands.add_parser(
        "audit-graphs", help="RINGS audit of your graph dataset (TU format or graph tables) → report.md"
    )
    graphs.add_argument("--tu", help="folder holding a TU-format dataset (<name>_A.txt, ...)")
    graphs.add_argument("--name", help="the TU dataset's name")
    graphs.add_argument("--tables", help="a graph-table folder (graphs/nodes/edges .parquet)")
    graphs.add_argument("--output", required=True, help="folder for the report, tables and figures")
    graphs.add_argument("--seeds", type=int, default=12, help="runs per mode (12 lets Wilcoxon reject)")
    graphs.add_argument("--seed", type=int, default=0, help="seed of the permutations and perturbations")
    graphs.add_argument("--workers", type=int, default=2)
    graphs.add_argument(
        "-S",
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="audit option, e.g. gnn.epochs=10",
    )
    graphs.set_defaults(handler=_audit_graphs)

    commands.add_parser("papers", help="list registered papers and their stages").set_defaults(
        handler=_papers
    )
    commands.add_parser("claims", help="print the claims table across papers").set_defaults(handler=_claims)

    smoke = commands.add_parser(
        "smoke", help="run pipelines at tiny sizes in a scratch copy (params.smoke.yaml)"
    )
    smoke.add_argument("targets", nargs="*", help="dvc.yaml stages (default: all)")
    smoke.add_argument("--workdir", help="scratch folder (default: a new temporary folder, kept)")
    smoke.set_defaults(handler=_smoke)

    run = commands.add_parser("run", help="run a paper with param overrides as a DVC experiment (isolated)")
    run.add_argument("paper")
    run.add_argument(
        "-S", "--set", action="append", default=[], metavar="KEY=VALUE", help="e.g. mrmc.pool_size=5000"
    )
    run.add_argument("-n", "--name", help="experiment name (default: DVC picks one)")
    run.add_argument("--workspace", default=".")
    run.set_defaults(handler=_run)

    audit = commands.add_parser(
        "audit", help="params, data hashes, validation, code, metrics and claims of a run"
    )
    audit.add_argument("paper")
    audit.add_argument("--exp", help="an experiment name (default: the workspace)")
    audit.add_argument(
        "--diff", nargs=2, metavar=("A", "B"), help="compare two runs ('workspace' or exp names)"
    )
    audit.add_argument("--output", help="also write the Markdown here")
    audit.add_argument("--workspace", default=".")
    audit.set_defaults(handler=_audit)

    served = commands.add_parser(
        "serve", help="Prefect server + UI on 127.0.0.1 with one deployment per paper"
    )
    served.add_argument("--port", type=int, default=4200)
    served.add_argument(
        "--stop", action="store_true", help="stop the running `icml25 serve` of this workspace"
    )
    served.add_argument("--workspace", default=".")
    served.set_defaults(handler=_serve)

    bench = commands.add_parser("bench", help="benchmarks → reports/benchmarks/")
    bench.add_argument(
        "--orchestration", action="store_true", help="Prefect overhead and Dask fan-out instead"
    )
    bench.add_argument(
        "--annotation",
        action="store_true",
        help="Info-Coevolution instead: a selection round on the 60k pool, HNSW vs brute-force kNN",
    )
    bench.add_argument(
        "--selection",
        action="store_true",
        help="dynamic selection instead: per-epoch scoring overhead, time at ratio 0.5 vs full data",
    )
    bench.add_argument(
        "--graphs",
        action="store_true",
        help="RINGS instead: one mode pair with 10,000 permutations, complementarity over B3DB, vs references",
    )
    bench.set_defaults(handler=_bench)

    flow = commands.add_parser("flow", help="run a paper's stages as a Prefect flow (embedded, no server)")
    flow.add_argument("paper")
    flow.add_argument("--workspace", default=".", help="the DVC workspace to run in")
    flow.add_argument("--force", action="store_true", help="rerun stages even if DVC finds them up to date")
    flow.set_defaults(handler=_flow)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point: user errors print one clear message and exit with status 2."""
    for key, value in OFFLINE_ENV.items():  # runs are offline, also when not started from the Makefile
        os.environ.setdefault(key, value)
    args = build_parser().parse_args(argv)
    try:
        args.handler(args)
    except PipelineError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    return 0
