"""The `data-<name>` step of a graph source: build, validate (GX + cross-table checks), write the tables."""

from __future__ import annotations

from stages.core.context import StepContext
from stages.core.io import write_json
from stages.datasets.graphs.table import validate_graph_tables, write_graph_tables
from stages.datasets.registry import get_source


def run(ctx: StepContext, source: str) -> None:
    """Materialise `source` into a graph-table folder and `summary.json` (counts and provenance)."""
    tables, provenance = get_source(source).load(getattr(ctx.common.datasets, source))
    report = validate_graph_tables(tables, source)
    write_graph_tables(tables, ctx.output("graphs"), report)
    write_json({"kind": source, **tables.summary(), "source": provenance}, ctx.output("summary"))
    ctx.log(f"{tables.n_graphs} graphs, {tables.nodes.height} nodes validated")
