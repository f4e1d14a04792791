"""The graph table format, its validation, torch_geometric conversion, the TU loader, B3DB and the controls."""

from __future__ import annotations

import networkx as nx
import numpy as np
import polars as pl
import pytest

from stages.core.errors import DataValidationError, PipelineError
from stages.datasets.graphs.controls import ControlParams, feature_control, structure_control
from stages.datasets.graphs.molecules import ATOM_FEATURES, load_b3db, molecules_to_graphs
from stages.datasets.graphs.table import (
    build_tables,
    from_pyg,
    read_graph_tables,
    to_pyg,
    validate_graph_tables,
    write_graph_tables,
)
from stages.datasets.graphs.tu_format import load_tu_dataset
from tests.unit.tu_fixture import NAME, write_tu_dataset


def two_graphs():
    features = [np.arange(6, dtype=np.float32).reshape(3, 2), np.ones((2, 2), np.float32)]
    edges = [np.array([[1, 0], [1, 2], [0, 1]]), np.array([[0, 1]])]
    return build_tables(np.array([0, 1]), features, edges)


def test_build_tables_stores_each_undirected_edge_once():
    tables = two_graphs()
    assert tables.edges.rows() == [(0, 0, 1), (0, 1, 2), (1, 0, 1)]
    assert tables.nodes.height == 5 and tables.feature_dim == 2
    assert validate_graph_tables(tables, "two").success


def test_pyg_round_trip_keeps_every_table(tmp_path):
    tables = two_graphs()
    graphs = to_pyg(tables)
    assert graphs[0].edge_index.shape == (2, 4)  # both directions
    assert graphs[1].y.item() == 1
    back = from_pyg(graphs)
    for name in ("graphs", "nodes", "edges"):
        assert getattr(back, name).equals(getattr(tables, name))
    write_graph_tables(tables, tmp_path / "g")
    assert read_graph_tables(tmp_path / "g").nodes.equals(tables.nodes)


@pytest.mark.parametrize(
    ("table", "change", "message"),
    [
        ("edges", pl.col("target") + 5, "table 'edges' column 'target'"),
        ("nodes", pl.col("node") * 2, "table 'nodes' column 'node'"),
        ("graphs", pl.lit(-1), "column 'label'"),
    ],
    ids=["edge-to-missing-node", "misnumbered-nodes", "negative-label"],
)
def test_validation_names_table_and_column(table, change, message):
    tables = two_graphs()
    column = {"edges": "target", "nodes": "node", "graphs": "label"}[table]
    broken = getattr(tables, table).with_columns(change.alias(column))
    parts = {name: getattr(tables, name) for name in ("graphs", "nodes", "edges")} | {table: broken}
    with pytest.raises(DataValidationError, match=message):
        validate_graph_tables(type(tables)(**parts), "two")


def test_tu_loader_reads_structure_labels_and_features(tmp_path):
    tables = load_tu_dataset(write_tu_dataset(tmp_path), NAME)
    assert tables.graphs["label"].to_list() == [1, 0, 0]  # -1 → 0, 1 → 1 (sorted classes)
    assert tables.edges.group_by("graph_id").len().sort("graph_id")["len"].to_list() == [3, 3, 3]
    assert tables.feature_dim == 2 + 3  # two attributes, three node-label classes one-hot
    x = np.stack(tables.nodes.filter(pl.col("graph_id") == 1)["x"].to_numpy())
    assert x[0, :2].tolist() == [3.5, -3.0] and x[0, 2:].tolist() == [0, 0, 1]
    assert validate_graph_tables(tables, NAME).success
    star = nx.Graph(tables.edges.filter(pl.col("graph_id") == 2).select("source", "target").rows())
    assert sorted(d for _, d in star.degree()) == [1, 1, 1, 3]


def test_tu_without_node_files_gets_constant_feature(tmp_path):
    folder = write_tu_dataset(tmp_path)
    (folder / f"{NAME}_node_labels.txt").unlink()
    (folder / f"{NAME}_node_attributes.txt").unlink()
    tables = load_tu_dataset(folder, NAME)
    assert tables.feature_dim == 1 and set(np.concatenate(tables.nodes["x"].to_list())) == {1.0}


@pytest.mark.parametrize(
    ("replace", "message"),
    [
        ({"A": ["1, 2", "2; 3"]}, r"TINY_A.txt: line 2: expected two comma-separated node ids, got '2; 3'"),
        ({"A": ["1, 2", "2, 3", "3, 12"]}, r"TINY_A.txt: line 3: node 12 is not in the graph indicator"),
        ({"A": ["3, 4"]}, r"TINY_A.txt: line 1: edge 3, 4 joins graphs 1 and 2"),
        ({"graph_indicator": ["1", "1", "3"]}, r"TINY_graph_indicator.txt: line 3: graph ids must be non-decreasing"),
        ({"graph_indicator": ["1", "x"]}, r"TINY_graph_indicator.txt: line 2: expected one integer, got 'x'"),
        ({"graph_labels": ["1", "0"]}, r"TINY_graph_labels.txt: 2 lines, but TINY_graph_indicator.txt names 3"),
        ({"node_attributes": ["1.0, 2.0"] * 10 + ["1.0"]}, r"TINY_node_attributes.txt: line 11: expected 2 finite"),
        ({"node_labels": ["0"] * 10}, r"TINY_node_labels.txt: 10 lines, but the graph has 11 nodes"),
    ],
    ids=["bad-a-line", "unknown-node", "cross-graph-edge", "indicator-gap", "indicator-text", "label-count",
         "attribute-width", "node-label-count"],
)  # fmt: skip
def test_malformed_tu_files_name_file_and_line(tmp_path, replace, message):
    with pytest.raises(DataValidationError, match=message):
        load_tu_dataset(write_tu_dataset(tmp_path, **replace), NAME)


def test_missing_tu_file_is_named(tmp_path):
    folder = write_tu_dataset(tmp_path)
    (folder / f"{NAME}_graph_labels.txt").unlink()
    with pytest.raises(PipelineError, match=r"TINY_graph_labels\.txt: missing"):
        load_tu_dataset(folder, NAME)


def test_molecules_become_heavy_atom_graphs_and_bad_smiles_are_counted():
    molecules = molecules_to_graphs(["CCO", "c1ccccc1", "not a smiles"], [1, 0, 1])
    assert molecules.unparsable == 1
    assert molecules.tables.graphs["label"].to_list() == [1, 0]
    assert molecules.tables.nodes.group_by("graph_id").len().sort("graph_id")["len"].to_list() == [3, 6]
    assert molecules.tables.edges.group_by("graph_id").len().sort("graph_id")["len"].to_list() == [2, 6]
    x = np.stack(molecules.tables.nodes["x"].to_numpy())
    assert x.shape[1] == ATOM_FEATURES and np.all(x.sum(axis=1) > 0)


def test_b3db_file_format(tmp_path):
    path = tmp_path / "B3DB_classification.tsv"
    columns = (
        "NO. compound_name IUPAC_name SMILES CID logBB BBB+/BBB- Inchi threshold reference group comments"
    )
    header = "\t".join(columns.split())
    rows = [f'{i}\t"name, {i}"\tx\t{smiles}\t1\t0.1\t{label}\tInChI\t\tR1\tA\t' for i, (smiles, label) in
            enumerate([("CCO", "BBB+"), ("CCN", "BBB-"), ("CCC", "BBB+"), ("CO", "BBB-")])]  # fmt: skip
    path.write_text("\n".join([header, *rows]) + "\n")
    molecules = load_b3db(None, 0, path)
    assert molecules.tables.graphs["label"].to_list() == [1, 0, 1, 0]
    path.write_text("\n".join([header, rows[0].replace("BBB+", "maybe")]) + "\n")
    with pytest.raises(DataValidationError, match="column 'BBB\\+/BBB-' holds 'maybe'"):
        load_b3db(None, 0, path)


def test_shipped_b3db_sample_is_stratified():
    molecules = load_b3db(60, 0)
    counts = molecules.tables.summary()["label_counts"]
    assert sum(counts.values()) == 60 and counts[1] > counts[0] > 15  # B3DB is 63% BBB+


def test_structure_control_matches_node_and_edge_counts_across_classes():
    tables = structure_control(ControlParams(graphs=40, min_nodes=12, max_nodes=16), seed=0)
    sizes = tables.nodes.group_by("graph_id").len().rename({"len": "n"})
    edges = tables.edges.group_by("graph_id").len().rename({"len": "m"})
    joined = tables.graphs.join(sizes, on="graph_id").join(edges, on="graph_id")
    assert (joined["m"] == 2 * (joined["n"] - 2)).all()  # BA(n, 2) and G(n, m) share m
    assert set(np.concatenate(tables.nodes["x"].to_list())) == {1.0}
    assert validate_graph_tables(tables, "structure_control").success


def test_feature_control_shifts_only_class_one_features():
    params = ControlParams(graphs=200, informative=2, shift=1.0)
    tables = feature_control(params, seed=0)
    x = np.stack(tables.nodes["x"].to_numpy())
    labels = tables.nodes.join(tables.graphs, on="graph_id")["label"].to_numpy()
    gap = x[labels == 1].mean(axis=0) - x[labels == 0].mean(axis=0)
    assert np.all(np.abs(gap[:2] - 1.0) < 0.1) and np.all(np.abs(gap[2:]) < 0.1)
    assert feature_control(params, seed=0).nodes.equals(tables.nodes)
