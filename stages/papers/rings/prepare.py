"""Step `rings-prepare`: every configured dataset as a validated graph-table folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stages.core.io import file_md5, write_json
from stages.core.steps import StepContext
from stages.datasets.graphs.controls import feature_control, structure_control
from stages.datasets.graphs.molecules import b3db_file, load_b3db
from stages.datasets.graphs.table import (
    GraphTables,
    read_graph_tables,
    validate_graph_tables,
    write_graph_tables,
)
from stages.datasets.graphs.tu_format import load_tu_dataset
from stages.papers.rings.params import DatasetSpec


def build_dataset(spec: DatasetSpec, seed: int) -> tuple[GraphTables, dict[str, Any]]:
    """The graph tables of one configured dataset and where they came from."""
    if spec.kind == "b3db":
        path = b3db_file()
        molecules = load_b3db(spec.max_molecules, seed, path)
        source = {"file": path.name, "md5": file_md5(path), "unparsable_smiles_dropped": molecules.unparsable}
        return molecules.tables, source
    if spec.kind in ("structure_control", "feature_control"):
        make = structure_control if spec.kind == "structure_control" else feature_control
        return make(spec, seed), {"generator": spec.kind, "seed": seed}
    if spec.kind == "tu":
        folder = Path(spec.path)
        files = sorted(folder.glob(f"{spec.name}_*.txt"))
        return load_tu_dataset(folder, spec.name), {"files": {path.name: file_md5(path) for path in files}}
    tables = read_graph_tables(spec.path)
    files = sorted(Path(spec.path).glob("*.parquet"))
    return tables, {"files": {path.name: file_md5(path) for path in files}}


def run(ctx: StepContext) -> None:
    """Build, validate and write each dataset; a summary with provenance goes to datasets.json."""
    folder = ctx.output("datasets")
    summaries = {}
    for name, spec in ctx.params.datasets.items():
        tables, source = build_dataset(spec, ctx.common.seed)
        report = validate_graph_tables(tables, name)
        write_graph_tables(tables, folder / name, report)
        summaries[name] = {"kind": spec.kind, **tables.summary(), "source": source}
        ctx.log(f"{name}: {tables.n_graphs} graphs, {tables.nodes.height} nodes validated")
    write_json(summaries, ctx.output("summary"))
