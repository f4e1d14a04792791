"""The graph table format: three Parquet tables keyed by graph id.

- `graphs.parquet`: `graph_id` (unique), `label` (class index 0..K-1)
- `nodes.parquet`: `graph_id`, `node` (0..n-1 within its graph), `x` (fixed-size float array of features)
- `edges.parquet`: `graph_id`, `source`, `target`; undirected, each edge once with `source < target`

Column checks run as a Great Expectations suite per table (`stages.core.validate`); the checks that span
tables (node numbering, edge endpoints, graphs without nodes) are recorded in the same report format.
`to_pyg` / `from_pyg` convert to and from torch_geometric `Data` lists (edges in both directions there).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from stages.core.errors import DataValidationError, PipelineError
from stages.core.io import read_parquet, write_json, write_parquet
from stages.core.schema import ColumnSpec, TableSchema
from stages.core.validate import ValidationReport, validate_table

if TYPE_CHECKING:
    from torch_geometric.data import Data

TABLE_FILES = ("graphs", "nodes", "edges")


def graph_schemas(feature_dim: int | None = None) -> dict[str, TableSchema]:
    """The expectations of the three tables (`feature_dim` fixes the length of `x`)."""
    return {
        "graphs": TableSchema(
            "graphs",
            (ColumnSpec("graph_id", "int", unique=True, min=0), ColumnSpec("label", "int", min=0)),
        ),
        "nodes": TableSchema(
            "nodes",
            (
                ColumnSpec("graph_id", "int", min=0),
                ColumnSpec("node", "int", min=0),
                ColumnSpec("x", "array", length=feature_dim),
            ),
        ),
        "edges": TableSchema(
            "edges",
            (
                ColumnSpec("graph_id", "int", min=0),
                ColumnSpec("source", "int", min=0),
                ColumnSpec("target", "int", min=0),
            ),
            min_rows=0,
        ),
    }


@dataclass(frozen=True)
class GraphTables:
    """A graph classification dataset as three tables (see the module docstring)."""

    graphs: pl.DataFrame
    nodes: pl.DataFrame
    edges: pl.DataFrame
    label_mapping: dict[str, int] = field(default_factory=dict)
    """How the source's raw labels became 0..K−1 (raw label as text → internal label); empty: used as given."""

    @property
    def n_graphs(self) -> int:
        """Number of graphs."""
        return self.graphs.height

    @property
    def feature_dim(self) -> int:
        """Length of the node feature vectors."""
        dtype = self.nodes.schema["x"]
        return dtype.size if isinstance(dtype, pl.Array) else len(self.nodes["x"][0])

    def summary(self) -> dict[str, Any]:
        """Counts a report shows: graphs, nodes, edges, feature dimension, label counts, the label mapping
        (raw → internal; `{}` when the source's labels were already 0..K−1 and used as given)."""
        labels = self.graphs.group_by("label").len().sort("label")
        return {
            "graphs": self.n_graphs,
            "nodes": self.nodes.height,
            "edges": self.edges.height,
            "mean_nodes": round(self.nodes.height / max(self.n_graphs, 1), 2),
            "mean_edges": round(self.edges.height / max(self.n_graphs, 1), 2),
            "feature_dim": self.feature_dim,
            "label_counts": dict(zip(labels["label"].to_list(), labels["len"].to_list(), strict=True)),
            "label_mapping": dict(self.label_mapping),
        }


def build_tables(labels: np.ndarray, features: list[np.ndarray], edges: list[np.ndarray]) -> GraphTables:
    """Graph tables (graph ids 0..N-1) from per-graph features (n_i × d) and undirected edges (m_i × 2)."""
    if not len(labels) == len(features) == len(edges):
        raise ValueError(f"{len(labels)} labels, {len(features)} feature matrices, {len(edges)} edge lists")
    ids = np.arange(len(features), dtype=np.int64)
    dim = features[0].shape[1] if features else 0
    counts = [len(x) for x in features]
    pairs = [canonical_edges(edge_list) for edge_list in edges]
    stacked = np.concatenate(pairs) if pairs else np.zeros((0, 2), np.int64)
    nodes = pl.DataFrame(
        {
            "graph_id": np.repeat(ids, counts),
            "node": np.concatenate([np.arange(n, dtype=np.int64) for n in counts]) if counts else [],
            "x": np.concatenate(features).astype(np.float32) if counts else np.zeros((0, dim), np.float32),
        },
        schema={"graph_id": pl.Int64, "node": pl.Int64, "x": pl.Array(pl.Float32, dim)},
    )
    edge_table = pl.DataFrame(
        {"graph_id": np.repeat(ids, [len(edge_list) for edge_list in pairs]), "source": stacked[:, 0],
         "target": stacked[:, 1]},
        schema={"graph_id": pl.Int64, "source": pl.Int64, "target": pl.Int64},
    )  # fmt: skip
    graphs = pl.DataFrame({"graph_id": ids, "label": np.asarray(labels, dtype=np.int64)})
    return GraphTables(graphs, nodes, edge_table)


def canonical_edges(pairs: np.ndarray) -> np.ndarray:
    """Undirected edges as unique (low, high) rows in sorted order, self-loops dropped."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    ordered = np.sort(pairs, axis=1)
    ordered = ordered[ordered[:, 0] != ordered[:, 1]]
    return np.unique(ordered, axis=0) if len(ordered) else ordered


def validate_graph_tables(tables: GraphTables, dataset: str) -> ValidationReport:
    """Run the three expectation suites and the cross-table checks; raise DataValidationError on failure."""
    schemas = graph_schemas()
    results: list[dict[str, Any]] = []
    failures: list[str] = []
    for name in TABLE_FILES:
        report = validate_table(getattr(tables, name), schemas[name], f"{dataset}/{name}")
        results += [{**result, "table": name} for result in report.results]
        if not report.success:
            failures.append(report.error_message())
    if not failures:
        for result in _cross_table_checks(tables) + _label_checks(tables.graphs):
            results.append(result)
            if not result["success"]:
                failures.append(
                    f"dataset '{dataset}': table '{result['table']}' column '{result['column']}': "
                    f"{result['expectation']} failed ({result['observed']})"
                )
    if failures:
        raise DataValidationError("\n".join(failures))
    return ValidationReport(
        dataset=dataset, schema="graph_tables", rows=tables.n_graphs, results=tuple(results)
    )


def _label_checks(graphs: pl.DataFrame) -> list[dict[str, Any]]:
    """Failed results when the labels are not class indices 0..K-1 (a label of 10⁹ would size arrays by it)
    or name a single class (nothing to classify). Recorded only on failure, so valid reports are unchanged."""
    classes, top = graphs["label"].n_unique(), graphs["label"].max()
    failed = []
    if classes < 2:
        failed.append(("expect_at_least_two_classes", f"{classes} class: a classifier needs at least 2"))
    if top is not None and top >= classes:
        observed = f"largest label {top} with {classes} distinct labels; re-encode them as 0..{classes - 1}"
        failed.append(("expect_labels_to_be_class_indices_0_to_k_minus_1", observed))
    return [
        {"table": "graphs", "column": "label", "expectation": name, "success": False, "observed": observed}
        for name, observed in failed
    ]


def _cross_table_checks(tables: GraphTables) -> list[dict[str, Any]]:
    sizes = tables.nodes.group_by("graph_id").agg(pl.len().alias("n"), pl.col("node").max().alias("top"))
    sizes = sizes.join(
        tables.nodes.group_by("graph_id").agg(pl.col("node").n_unique().alias("distinct")), on="graph_id"
    )
    numbering = sizes.filter((pl.col("top") != pl.col("n") - 1) | (pl.col("distinct") != pl.col("n")))
    missing_nodes = tables.graphs.join(sizes, on="graph_id", how="anti")
    orphan_nodes = tables.nodes.join(tables.graphs, on="graph_id", how="anti")
    edge_bounds = tables.edges.join(sizes.select("graph_id", "n"), on="graph_id", how="left")
    bad_edges = edge_bounds.filter(
        pl.col("n").is_null() | (pl.col("target") >= pl.col("n")) | (pl.col("source") >= pl.col("target"))
    )
    duplicate_edges = tables.edges.height - tables.edges.unique(["graph_id", "source", "target"]).height

    def check(
        table: str, column: str, expectation: str, bad: pl.DataFrame | int, what: str
    ) -> dict[str, Any]:
        count = bad if isinstance(bad, int) else bad.height
        example = "" if isinstance(bad, int) or not count else f"; first: {bad.row(0, named=True)}"
        return {
            "table": table,
            "column": column,
            "expectation": expectation,
            "success": count == 0,
            "observed": f"{count} {what}{example}",
        }

    return [
        check(
            "graphs", "graph_id", "expect_every_graph_to_have_nodes", missing_nodes, "graphs without nodes"
        ),
        check(
            "nodes", "graph_id", "expect_graph_id_in_graphs_table", orphan_nodes, "nodes of unknown graphs"
        ),
        check("nodes", "node", "expect_nodes_numbered_0_to_n_minus_1", numbering, "graphs misnumbered"),
        check(
            "edges", "target", "expect_edge_endpoints_are_nodes_with_source_lt_target", bad_edges, "bad edges"
        ),
        check("edges", "source", "expect_edges_unique", duplicate_edges, "duplicate edges"),
    ]


def write_graph_tables(tables: GraphTables, folder: Path, validation: ValidationReport | None = None) -> None:
    """Write graphs/nodes/edges Parquet files (and the validation report) into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in TABLE_FILES:
        write_parquet(getattr(tables, name), folder / f"{name}.parquet")
    if validation is not None:
        write_json(validation.to_dict(), folder / "validation.json")


def read_graph_tables(folder: str | Path) -> GraphTables:
    """Read a graph-table folder; a missing table is named with its path."""
    folder = Path(folder)
    frames = {}
    for name in TABLE_FILES:
        path = folder / f"{name}.parquet"
        if not path.is_file():
            raise PipelineError(
                f"{path}: missing; a graph-table folder holds {', '.join(TABLE_FILES)} .parquet"
            )
        frames[name] = read_parquet(path)
    if "x" in frames["nodes"].columns and isinstance(frames["nodes"].schema["x"], pl.List):
        lengths = frames["nodes"]["x"].list.len()
        if lengths.min() == lengths.max():  # ragged lists stay lists: validation names them
            width = int(lengths.max() or 0)
            frames["nodes"] = frames["nodes"].with_columns(pl.col("x").cast(pl.Array(pl.Float32, width)))
    return GraphTables(**frames)


def graph_arrays(tables: GraphTables) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
    """Labels, per-graph feature matrices and per-graph canonical edge arrays, in graph-id order."""
    graphs = tables.graphs.sort("graph_id")
    ids = graphs["graph_id"].to_numpy()
    nodes = tables.nodes.sort("graph_id", "node")
    node_ids = nodes["graph_id"].to_numpy()
    x = nodes["x"].to_numpy().astype(np.float32, copy=False).reshape(nodes.height, -1)
    node_bounds = np.searchsorted(node_ids, np.r_[ids, ids[-1] + 1] if len(ids) else ids)
    edges = tables.edges.sort("graph_id", "source", "target")
    edge_ids = edges["graph_id"].to_numpy()
    pairs = edges.select("source", "target").to_numpy().astype(np.int64)
    features, edge_lists = [], []
    for index, graph_id in enumerate(ids):
        features.append(x[node_bounds[index] : node_bounds[index + 1]])
        low, high = np.searchsorted(edge_ids, [graph_id, graph_id + 1])
        edge_lists.append(pairs[low:high])
    return graphs["label"].to_numpy(), features, edge_lists


def to_pyg(tables: GraphTables) -> list[Data]:
    """torch_geometric `Data` per graph: `x` (float32), `edge_index` (both directions), `y`, `graph_id`."""
    import torch
    from torch_geometric.data import Data

    labels, features, edge_lists = graph_arrays(tables)
    ids = tables.graphs.sort("graph_id")["graph_id"].to_list()
    graphs = []
    for graph_id, label, x, pairs in zip(ids, labels, features, edge_lists, strict=True):
        both = np.concatenate([pairs, pairs[:, ::-1]]).T if len(pairs) else np.zeros((2, 0), np.int64)
        graphs.append(
            Data(
                x=torch.tensor(x, dtype=torch.float32),
                edge_index=torch.from_numpy(np.ascontiguousarray(both)),
                y=torch.tensor([int(label)]),
                graph_id=int(graph_id),
            )
        )
    return graphs


def from_pyg(graphs: list[Data]) -> GraphTables:
    """Graph tables from torch_geometric `Data` objects (`x` required, `y` a single class index)."""
    labels, features, edges = [], [], []
    for index, graph in enumerate(graphs):
        if graph.x is None or graph.y is None:
            raise PipelineError(f"graph {index}: a Data object needs `x` (node features) and `y` (its label)")
        labels.append(int(graph.y.reshape(-1)[0]))
        features.append(graph.x.detach().cpu().numpy().astype(np.float32))
        edges.append(graph.edge_index.detach().cpu().numpy().T)
    return build_tables(np.asarray(labels, dtype=np.int64), features, edges)
