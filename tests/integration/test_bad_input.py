"""Bad input: a clear error naming the file, column or key, a non-zero exit, and no outputs."""

from __future__ import annotations

import shutil

import polars as pl
import pytest

from stages.core.io import write_parquet
from stages.core.params import apply_overrides, read_params_file, write_params_file
from tests.conftest import run_cli


@pytest.fixture
def workspace(tmp_path, repo_root):
    shutil.copy(repo_root / "params.yaml", tmp_path / "params.yaml")
    return tmp_path


def _set(workspace, *overrides):
    path = workspace / "params.yaml"
    write_params_file(apply_overrides(read_params_file(path), list(overrides)), path)


def test_unknown_param_key_fails_at_stage_start(workspace):
    _set(workspace, "mrmc.pool_sise=10")
    result = run_cli(["stage", "mrmc-prepare"], workspace)
    assert result.returncode == 2
    assert "mrmc.pool_sise" in result.stderr and "Traceback" not in result.stderr
    assert not (workspace / "data").exists()


def test_wrong_param_type_fails_naming_key(workspace):
    _set(workspace, "coreset.budget=lots")
    result = run_cli(["stage", "coreset-select"], workspace)
    assert result.returncode == 2 and "coreset.budget" in result.stderr


def test_invalid_dataset_leaves_no_outputs(workspace, tiny_table):
    _set(workspace, "coreset.input=data/mine.parquet")
    broken = tiny_table.with_columns(
        pl.when(pl.col("sample_id") < 2).then(None).otherwise(pl.col("label")).alias("label")
    )
    write_parquet(broken, workspace / "data" / "mine.parquet")
    result = run_cli(["stage", "coreset-select"], workspace)
    assert result.returncode == 2
    assert "dataset 'data/mine.parquet'" in result.stderr
    assert "column 'label': expect_column_values_to_not_be_null failed, 2 bad rows" in result.stderr
    assert not (workspace / "data" / "coreset").exists()
    assert not list(workspace.glob(".icml25-staging-*"))


def test_missing_input_names_the_stage_that_makes_it(workspace):
    result = run_cli(["stage", "mrmc-trace"], workspace)
    assert result.returncode == 2 and "data/mrmc/pool.parquet" in result.stderr


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (pl.DataFrame({"x": [1.0, 2.0], "y": [0.0, 1.0]}), "label column 'label' not found"),
        (
            pl.DataFrame({"x": [1.0, 2.0], "label": [0.5, 1.0]}),
            "label column 'label' is Float64; labels must be integers, strings or booleans",
        ),
        (pl.DataFrame({"x": [1.0, None], "label": [0, 1]}), "column 'x': 1 null value(s), first at row 1"),
    ],
    ids=["missing-label", "float-labels", "null-feature"],
)
def test_user_table_errors(tmp_path, frame, message):
    frame.write_parquet(tmp_path / "mine.parquet")
    result = run_cli(
        ["select", "--input", "mine.parquet", "--output", "out.parquet", "--method", "random"], tmp_path
    )
    assert result.returncode == 2
    assert message in result.stderr and "mine.parquet" in result.stderr
    assert not (tmp_path / "out.parquet").exists()


def test_select_on_a_user_table(tmp_path, tiny_table):
    rows = tiny_table.filter(pl.col("split") == "train")
    wide = rows.select(
        pl.col("label").alias("y"), *[pl.col("features").arr.get(i).alias(f"f{i}") for i in range(5)]
    )
    wide.write_parquet(tmp_path / "mine.parquet")
    result = run_cli(
        [
            "select",
            "--input",
            "mine.parquet",
            "--label-column",
            "y",
            "--output",
            "out.parquet",
            "--method",
            "mrmc",
            "--budget",
            "0.25",
            "--trace-epochs",
            "3",
        ],
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    chosen = pl.read_parquet(tmp_path / "out.parquet")
    assert chosen.height == round(0.25 * rows.height)
    assert chosen["sample_id"].n_unique() == chosen.height


def test_unknown_stage_lists_stages(workspace):
    result = run_cli(["stage", "mrmc-fit"], workspace)
    assert result.returncode == 2 and "mrmc-trace" in result.stderr
