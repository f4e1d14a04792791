"""`icml25 audit-graphs`: the RINGS audit of your own graph dataset (TU format or graph tables)."""

from __future__ import annotations

import argparse
from pathlib import Path

from stages.core.errors import PipelineError


def _audit_graphs(args: argparse.Namespace) -> None:
    from stages.core.params import apply_overrides, validate_section
    from stages.datasets.graphs.table import read_graph_tables
    from stages.datasets.graphs.tu_format import load_tu_dataset, tu_dataset_name
    from stages.methods.graphs.config import AuditConfig
    from stages.methods.graphs.standalone import audit_graph_datasets

    if bool(args.tu) == bool(args.tables):
        raise PipelineError("audit-graphs: give exactly one of --tu FOLDER or --tables FOLDER")
    folder = Path(args.tu or args.tables)
    tu_name = (args.name or tu_dataset_name(folder)) if args.tu else None
    name = (tu_name or args.name or folder.name).lower()
    tables = load_tu_dataset(folder, tu_name) if tu_name else read_graph_tables(folder)
    if tables.label_mapping:
        encoding = ", ".join(f"{raw} → {label}" for raw, label in tables.label_mapping.items())
        print(f"{name}: labels {encoding} (raw → internal)")
    raw = apply_overrides({"workers": args.workers, "seeds": list(range(args.seeds))}, args.set)
    config = validate_section(AuditConfig, raw, "audit", source="command line")
    report = audit_graph_datasets({name: tables}, config, args.seed, args.output)
    print(report.read_text())
    print(f"report: {report}")


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add `audit-graphs` to the `icml25` parser."""
    graphs = commands.add_parser(
        "audit-graphs", help="RINGS audit of your graph dataset (TU format or graph tables) → report.md"
    )
    graphs.add_argument("--tu", help="folder holding a TU-format dataset (<name>_A.txt, ...)")
    graphs.add_argument("--name", help="the TU dataset's name (default: NAME of the folder's one NAME_A.txt)")
    graphs.add_argument("--tables", help="a graph-table folder (graphs/nodes/edges .parquet)")
    graphs.add_argument("--output", required=True, help="folder for the report, tables and figures")
    graphs.add_argument(
        "--seeds", type=int, default=14, help="runs per mode (14 lets Wilcoxon reject over all 28 mode pairs)"
    )
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
