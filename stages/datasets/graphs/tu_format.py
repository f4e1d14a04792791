"""A loader for the TU graph-dataset format (the files of https://chrsmrrs.github.io/datasets/).

A dataset `NAME` in a folder holds
- `NAME_A.txt`: one edge per line, `i, j` (1-based node ids over the whole dataset);
- `NAME_graph_indicator.txt`: line i holds the graph id (1-based) of node i;
- `NAME_graph_labels.txt`: line g holds the class of graph g (any integers; mapped to 0..K-1 in sorted order,
  e.g. −1 → 0, 1 → 1; the mapping is kept in `GraphTables.label_mapping` and every summary and report);
- optional `NAME_node_labels.txt` (one integer per node, one-hot encoded) and/or `NAME_node_attributes.txt`
  (comma-separated floats per node). Attributes come first when both exist; without either, every node gets
  the single feature 1.

Every malformed line is reported with its file and line number. :func:`tu_dataset_name` finds NAME from the
one `NAME_A.txt` in a folder.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from stages.core.errors import DataValidationError, PipelineError
from stages.datasets.graphs.table import GraphTables, build_tables


def tu_dataset_name(folder: str | Path) -> str:
    """NAME of the TU dataset in `folder`, from its one `NAME_A.txt` (error when there is none or several)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise PipelineError(f"{folder}: not a folder; a TU dataset is a folder of NAME_A.txt, ... files")
    names = sorted(path.name.removesuffix("_A.txt") for path in folder.glob("*_A.txt"))
    if len(names) != 1:
        found = f"several ({', '.join(names)})" if names else "none"
        raise PipelineError(
            f"{folder}: expected one TU adjacency file NAME_A.txt to name the dataset, found {found}; "
            "give the name (--name / name:)"
        )
    return names[0]


def load_tu_dataset(folder: str | Path, name: str) -> GraphTables:
    """Read TU dataset `name` from `folder` into graph tables."""
    folder = Path(folder)
    indicator_path = _required(folder, name, "graph_indicator")
    graph_of_node = _read_int_column(indicator_path)
    n_nodes = len(graph_of_node)
    _check_indicator(indicator_path, graph_of_node)
    n_graphs = int(graph_of_node[-1])
    labels_path = _required(folder, name, "graph_labels")
    raw_labels = _read_int_column(labels_path)
    if len(raw_labels) != n_graphs:
        raise DataValidationError(
            f"{labels_path}: {len(raw_labels)} lines, but {indicator_path.name} names {n_graphs} graphs"
        )
    edges = _read_edges(_required(folder, name, "A"), graph_of_node)
    features = _node_features(folder, name, n_nodes)
    classes = np.unique(raw_labels)
    labels = np.searchsorted(classes, raw_labels)
    starts = np.searchsorted(graph_of_node, np.arange(1, n_graphs + 2))
    per_graph_features, per_graph_edges = [], []
    edge_graph = graph_of_node[edges[:, 0]] if len(edges) else np.zeros(0, np.int64)
    order = np.argsort(edge_graph, kind="stable")
    edges, edge_graph = edges[order], edge_graph[order]
    edge_starts = np.searchsorted(edge_graph, np.arange(1, n_graphs + 2))
    for graph in range(n_graphs):
        first, last = starts[graph], starts[graph + 1]
        per_graph_features.append(features[first:last])
        per_graph_edges.append(edges[edge_starts[graph] : edge_starts[graph + 1]] - first)
    mapping = {str(raw): index for index, raw in enumerate(classes.tolist())}
    return replace(build_tables(labels, per_graph_features, per_graph_edges), label_mapping=mapping)


def _required(folder: Path, name: str, suffix: str) -> Path:
    path = folder / f"{name}_{suffix}.txt"
    if not path.is_file():
        raise PipelineError(
            f"{path}: missing; a TU dataset needs {name}_A.txt, {name}_graph_indicator.txt and "
            f"{name}_graph_labels.txt"
        )
    return path


def _lines(path: Path) -> list[tuple[int, str]]:
    """(1-based line number, stripped text) of the non-empty lines; a binary file is named."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DataValidationError(
            f"{path}: not a text file (byte {error.start} is not UTF-8); TU files are plain text"
        ) from None
    if "\x00" in text:
        raise DataValidationError(f"{path}: not a text file (it holds NUL bytes); TU files are plain text")
    return [(number, line.strip()) for number, line in enumerate(text.splitlines(), 1) if line.strip()]


def _read_int_column(path: Path) -> np.ndarray:
    values = []
    for number, text in _lines(path):
        try:
            values.append(int(text))
        except ValueError:
            raise DataValidationError(f"{path}: line {number}: expected one integer, got {text!r}") from None
    if not values:
        raise DataValidationError(f"{path}: the file is empty")
    return np.asarray(values, dtype=np.int64)


def _check_indicator(path: Path, graph_of_node: np.ndarray) -> None:
    if graph_of_node[0] != 1:
        raise DataValidationError(f"{path}: line 1: graph ids start at 1, got {graph_of_node[0]}")
    steps = np.diff(graph_of_node)
    bad = np.flatnonzero((steps < 0) | (steps > 1))
    if len(bad):
        line = int(bad[0]) + 2
        raise DataValidationError(
            f"{path}: line {line}: graph ids must be non-decreasing without gaps "
            f"(got {graph_of_node[bad[0]]} then {graph_of_node[bad[0] + 1]})"
        )


def _read_edges(path: Path, graph_of_node: np.ndarray) -> np.ndarray:
    """Edges as 0-based global node pairs; an unknown node or an edge across graphs names its line."""
    n_nodes = len(graph_of_node)
    pairs = []
    for number, text in _lines(path):
        parts = [part.strip() for part in text.split(",")]
        try:
            source, target = (int(part) for part in parts)
        except ValueError:
            raise DataValidationError(
                f"{path}: line {number}: expected two comma-separated node ids, got {text!r}"
            ) from None
        for node in (source, target):
            if not 1 <= node <= n_nodes:
                raise DataValidationError(
                    f"{path}: line {number}: node {node} is not in the graph indicator (nodes 1..{n_nodes})"
                )
        if graph_of_node[source - 1] != graph_of_node[target - 1]:
            raise DataValidationError(
                f"{path}: line {number}: edge {source}, {target} joins graphs "
                f"{graph_of_node[source - 1]} and {graph_of_node[target - 1]}"
            )
        pairs.append((source - 1, target - 1))
    return np.asarray(pairs, dtype=np.int64).reshape(-1, 2)


def _node_features(folder: Path, name: str, n_nodes: int) -> np.ndarray:
    blocks = []
    attributes = folder / f"{name}_node_attributes.txt"
    if attributes.is_file():
        blocks.append(_read_float_rows(attributes, n_nodes))
    node_labels = folder / f"{name}_node_labels.txt"
    if node_labels.is_file():
        values = _read_int_column(node_labels)
        if len(values) != n_nodes:
            raise DataValidationError(
                f"{node_labels}: {len(values)} lines, but the graph has {n_nodes} nodes"
            )
        classes, index = np.unique(values, return_inverse=True)
        blocks.append(np.eye(len(classes), dtype=np.float32)[index])
    if not blocks:
        return np.ones((n_nodes, 1), np.float32)
    return np.concatenate(blocks, axis=1)


def _read_float_rows(path: Path, n_nodes: int) -> np.ndarray:
    rows, width = [], None
    for number, text in _lines(path):
        try:
            row = [float(part) for part in text.split(",")]
        except ValueError:
            raise DataValidationError(
                f"{path}: line {number}: expected comma-separated numbers, got {text!r}"
            ) from None
        if width is None:
            width = len(row)
        if len(row) != width or not np.all(np.isfinite(row)):
            raise DataValidationError(f"{path}: line {number}: expected {width} finite numbers, got {text!r}")
        rows.append(row)
    if len(rows) != n_nodes:
        raise DataValidationError(f"{path}: {len(rows)} lines, but the graph indicator lists {n_nodes} nodes")
    return np.asarray(rows, dtype=np.float32)
