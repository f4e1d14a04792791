"""The bad-inputs battery: each input → exit code 2 → a message naming the file or key → nothing written.

Every own-data command and every paper's first stage is run on the same broken inputs; a row added here is
enforced for all of them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from stages.core.params import (
    ParamsError,
    apply_overrides,
    read_params_file,
    validate_section,
    write_params_file,
)
from stages.models.config import TrainConfig
from stages.papers.registry import PAPERS
from tests.conftest import run_cli

pytestmark = pytest.mark.integration

NOT_PARQUET = b"PAR1 this is not a Parquet file\x00\x01"


def _garbage(folder, name="mine.parquet"):
    path = folder / name
    path.write_bytes(NOT_PARQUET)
    return path


OWN_DATA_COMMANDS = [
    (["validate", "--input", "mine.parquet"], "mine.parquet: not a readable Parquet file"),
    (
        ["select", "--input", "mine.parquet", "--method", "random", "--output", "out.parquet"],
        "mine.parquet: not a readable Parquet file",
    ),
]


@pytest.mark.parametrize(("args", "message"), OWN_DATA_COMMANDS, ids=["validate", "select"])
def test_unreadable_parquet_is_named_by_every_own_data_command(tmp_path, args, message):
    _garbage(tmp_path)
    result = run_cli(args, tmp_path)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["mine.parquet"]


def test_unreadable_graph_table_is_named_by_audit_graphs(tmp_path):
    folder = tmp_path / "graphs"
    folder.mkdir()
    for name in ("graphs.parquet", "nodes.parquet", "edges.parquet"):
        _garbage(folder, name)
    result = run_cli(["audit-graphs", "--tables", "graphs", "--output", "audit"], tmp_path)
    assert result.returncode == 2, result.stderr
    assert "not a readable Parquet file" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "audit").exists()


TRAIN_CONFIG_CASES = [
    ("learning_rate=.inf", "learning_rate", "finite number"),
    ("learning_rate=.nan", "learning_rate", "finite number"),
    ("hidden=[0]", "hidden.0", "greater than 0"),
]


def _trained_config_key(paper_id: str) -> str | None:
    """The first key of the paper's params typed as the shared `TrainConfig`."""
    fields = PAPERS.get(paper_id).pipeline.model().model_fields
    return next((key for key, field in fields.items() if field.annotation is TrainConfig), None)


TRAINED_PAPERS = [paper_id for paper_id in PAPERS.names() if _trained_config_key(paper_id)]


@pytest.mark.parametrize("paper_id", TRAINED_PAPERS)
@pytest.mark.parametrize(("override", "field", "message"), TRAIN_CONFIG_CASES)
def test_training_settings_that_cannot_train_are_named_by_every_paper(
    repo_root, paper_id, override, field, message
):
    key = _trained_config_key(paper_id)
    params = apply_overrides(read_params_file(repo_root / "params.yaml"), [f"{paper_id}.{key}.{override}"])
    model = PAPERS.get(paper_id).pipeline.model()
    with pytest.raises(ParamsError, match=rf"{paper_id}\.{key}\.{field}: .*{message}"):
        validate_section(model, params[paper_id], paper_id)


def test_a_first_stage_stops_on_an_infinite_learning_rate_and_writes_nothing(tmp_path, repo_root):
    params = apply_overrides(read_params_file(repo_root / "params.yaml"), ["mrmc.train.learning_rate=.inf"])
    write_params_file(params, tmp_path / "params.yaml")
    result = run_cli(["stage", PAPERS.get("mrmc").pipeline.stage_names()[0]], tmp_path)
    assert result.returncode == 2, result.stderr
    assert "mrmc.train.learning_rate: Input should be a finite number" in result.stderr
    assert not (tmp_path / "data").exists()


def test_an_invalid_yaml_override_is_named(tmp_path, repo_root):
    shutil.copy(repo_root / "params.yaml", tmp_path / "params.yaml")
    result = run_cli(["run", "mrmc", "-S", "mrmc.budgets=[0.1, 0.3"], tmp_path)
    assert result.returncode == 2, result.stderr
    assert "override 'mrmc.budgets=[0.1, 0.3': not valid YAML" in result.stderr
    assert "Traceback" not in result.stderr


# ---- the battery's table: input → exit code → message fragment → outputs intact (nothing written) ----


def _classification_table(folder, features, split=None, label=None):
    """A classification table (`features` list column) at `folder/mine.parquet`."""
    import polars as pl

    rows = len(features)
    frame = pl.DataFrame(
        {
            "sample_id": list(range(rows)),
            "split": split or ["train", "test"] * (rows // 2),
            "label": label or [0, 1] * (rows // 2),
            "features": features,
        },
        schema_overrides={"features": pl.List(pl.Float32)},
    )
    frame.write_parquet(folder / "mine.parquet")


def _table_stage(folder, **table):
    """`icml25 stage data-table` on `mine.parquet` (written by `table`'s keyword arguments)."""
    _classification_table(folder, **table)
    params = apply_overrides(
        read_params_file(REPO_PARAMS),
        ["common.datasets.table.path=mine.parquet", "common.datasets.table.split_column=split"],
    )
    write_params_file(params, folder / "params.yaml")
    return ["stage", "data-table"]


def _graph_tables(folder, labels, widths=None):
    """A graph-table folder `graphs/` of two-node graphs, one per label; `widths` gives each graph's features."""
    import polars as pl

    root = folder / "graphs"
    root.mkdir()
    widths = widths or [2] * len(labels)
    pl.DataFrame({"graph_id": range(len(labels)), "label": labels}).write_parquet(root / "graphs.parquet")
    nodes = [(graph, node, [1.0] * width) for graph, width in enumerate(widths) for node in (0, 1)]
    pl.DataFrame(
        nodes, schema={"graph_id": pl.Int64, "node": pl.Int64, "x": pl.List(pl.Float32)}, orient="row"
    ).write_parquet(root / "nodes.parquet")
    pl.DataFrame(
        {"graph_id": range(len(labels)), "source": [0] * len(labels), "target": [1] * len(labels)}
    ).write_parquet(root / "edges.parquet")
    return ["audit-graphs", "--tables", "graphs", "--output", "audit", "--seeds", "2"]


def _binary_tu(folder):
    root = folder / "tu"
    root.mkdir()
    (root / "toy_graph_indicator.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
    (root / "toy_graph_labels.txt").write_text("0\n")
    (root / "toy_A.txt").write_text("1, 1\n")
    return ["audit-graphs", "--tu", "tu", "--name", "toy", "--output", "audit", "--seeds", "2"]


def _short_trace(folder):
    params = apply_overrides(read_params_file(REPO_PARAMS), ["mrmc.trace.epochs=1"])
    write_params_file(params, folder / "params.yaml")
    return ["stage", PAPERS.get("mrmc").pipeline.stage_names()[0]]


BATTERY = {
    "ragged feature lists in a user table": (
        lambda folder: _table_stage(folder, features=[[1.0, 2.0], [1.0], [0.5, 0.5], [2.0, 1.0]]),
        "column 'features': expect_array_lengths_to_be_equal failed",
    ),
    "a user table without train rows": (
        lambda folder: _table_stage(folder, features=[[1.0, 2.0]] * 4, split=["test"] * 4),
        "mine.parquet): no 'train' rows (split values: test)",
    ),
    "a label of 1e9 in a user table": (
        lambda folder: _table_stage(folder, features=[[1.0, 2.0]] * 4, label=[0, 10**9, 0, 10**9]),
        "column 'label': labels must be class indices 0..K-1; the largest is 1000000000 with 2 distinct labels",
    ),
    "a graph set with one class": (
        lambda folder: _graph_tables(folder, [1, 1, 1, 1]),
        "column 'label': expect_at_least_two_classes failed (1 class",
    ),
    "a label of 1e9 in a graph table": (
        lambda folder: _graph_tables(folder, [0, 10**9, 0, 10**9]),
        "expect_labels_to_be_class_indices_0_to_k_minus_1 failed (largest label 1000000000 with 2 distinct",
    ),
    "ragged node features in a graph table": (
        lambda folder: _graph_tables(folder, [0, 1, 0, 1], widths=[2, 3, 2, 2]),
        "column 'x': expect_array_lengths_to_be_equal failed",
    ),
    "a binary TU file": (_binary_tu, "toy_graph_indicator.txt: not a text file"),
    "mrmc.trace.epochs: 1": (_short_trace, "mrmc.trace.epochs 1 is too few for the traced epochs"),
}
REPO_PARAMS = Path(__file__).parents[2] / "params.yaml"


def _files(folder):
    """Every path under `folder` but the stage locks (`.dvc/tmp/stage-locks`), which are not outputs."""
    return sorted(path.relative_to(folder) for path in folder.rglob("*") if ".dvc" not in path.parts)


@pytest.mark.parametrize(("make_input", "message"), BATTERY.values(), ids=list(BATTERY))
def test_bad_input_stops_early_named_and_writes_nothing(tmp_path, monkeypatch, capsys, make_input, message):
    # in-process through the command line's entry point (the exit code and message a user gets, without
    # paying an interpreter start per row; `test_unreadable_parquet_*` above run the real subprocess)
    from stages.platform.commands import main

    args = make_input(tmp_path)
    before = _files(tmp_path)
    monkeypatch.chdir(tmp_path)
    code = main(args)
    stderr = capsys.readouterr().err
    assert code == 2, stderr
    assert message in stderr, stderr
    assert _files(tmp_path) == before
