"""`graph_table`: your graph dataset as a graph-table folder (graphs/nodes/edges .parquet).

Optional: its stage exists once `common.datasets.graph_table: {path}` is set in params.yaml (then run
`icml25 dvc-yaml`). The folder is a DVC dep of its stage.
"""

from __future__ import annotations

from pathlib import Path

from stages.core.inputs import folder_problems
from stages.core.io import file_md5
from stages.core.params import StrictModel
from stages.datasets.source import GRAPHS, Source


class GraphTableParams(StrictModel):
    """The folder holding graphs.parquet, nodes.parquet and edges.parquet."""

    path: str


def load(params: GraphTableParams):
    """The folder's graph tables, with the md5 of each Parquet file."""
    from stages.datasets.graphs.table import read_graph_tables

    files = sorted(Path(params.path).glob("*.parquet"))
    return read_graph_tables(params.path), {"files": {path.name: file_md5(path) for path in files}}


SOURCE = Source(
    "graph_table",
    GRAPHS,
    GraphTableParams,
    load,
    "your graph-table folder (common.datasets.graph_table.path)",
    deps={"input": "${common.datasets.graph_table.path}"},
    optional=True,
    check=lambda params: folder_problems(
        params.path,
        "common.datasets.graph_table.path",
        [f"{name}.parquet" for name in ("graphs", "nodes", "edges")],
    ),
)
