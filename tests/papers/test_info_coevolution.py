"""Info-Coevolution pipeline: a user's wide Parquet table end to end, determinism, and bad input."""

from __future__ import annotations

import shutil

import numpy as np
import polars as pl
import pytest

from stages.core.claims import read_claims
from stages.core.io import file_md5
from stages.core.params import apply_overrides, read_params_file, write_params_file
from stages.platform.pipelines import run_stage
from tests.conftest import blobs_table, run_cli

STEPS = ("prepare", "reference", "annotate", "evaluate", "claims")
TINY_SCHEDULE = (
    "info_coevolution.dataset=table",
    "info_coevolution.pool_size=null",
    "info_coevolution.test_size=null",
    "info_coevolution.seeds=[0, 1, 2]",
    "info_coevolution.seed_fraction=0.1",
    "info_coevolution.round_fraction=0.1",
    "info_coevolution.batch_size=4",
    "info_coevolution.budget=0.6",
    "info_coevolution.min_steps=20",
    "info_coevolution.train.epochs=2",
    "info_coevolution.train.hidden=[16]",
    "info_coevolution.train.architecture=mlp",  # a user's feature table is not an image: no CNN, no FixMatch
    "info_coevolution.train.augment=none",
    "info_coevolution.calibration_size=10",
    "info_coevolution.strategies={random: {strategy: random}, least_confidence: {strategy: least_confidence}, "
    "info_coevolution: {strategy: info_coevolution, options: {vote_radius_quantile: 0.5}}, "
    "info_coevolution_semi: {strategy: info_coevolution_semi}}",
    "info_coevolution.claims.reported=[]",
    "common.datasets.table.path=mine.parquet",
    "common.datasets.table.label_column=y",
)


def wide_table(n_per_class: int = 40) -> pl.DataFrame:
    """A user's table: numeric feature columns f0..f4 and an integer label `y` (no split, no ids)."""
    table = blobs_table(n_per_class=n_per_class)
    features = np.array(table["features"].to_list())
    return pl.DataFrame({f"f{i}": features[:, i] for i in range(features.shape[1])}).with_columns(
        pl.Series("y", table["label"])
    )


@pytest.fixture
def workspace(tmp_path, repo_root, monkeypatch):
    monkeypatch.chdir(tmp_path)  # steps run in-process here; the failing one runs through the CLI
    shutil.copy(repo_root / "params.yaml", tmp_path / "params.yaml")
    wide_table().write_parquet(tmp_path / "mine.parquet")
    set_params(tmp_path, *TINY_SCHEDULE)
    return tmp_path


def set_params(workspace, *overrides):
    path = workspace / "params.yaml"
    write_params_file(apply_overrides(read_params_file(path), list(overrides)), path)


def run_pipeline(workspace, stages=("data-table", *(f"info_coevolution-{step}" for step in STEPS))) -> None:
    for stage in stages:
        run_stage(stage, workspace / "params.yaml", workspace)


def test_users_wide_table_runs_end_to_end_and_deterministically(workspace):
    run_pipeline(workspace)
    root = workspace / "data" / "info_coevolution"
    claims = read_claims(root / "claims.json")
    assert [claim.id for claim in claims] == [
        "fewer_annotations",
        "automatic_stop",
        "semi_supervised_saves_more",
    ]
    curves = pl.read_parquet(root / "curves.parquet")
    assert set(curves["strategy"]) == {
        "random",
        "least_confidence",
        "info_coevolution",
        "info_coevolution_semi",
    }
    assert curves["n_annotated"].max() <= round(0.6 * 86)  # the budget caps every run (96 train rows − 10)
    assert curves["temperature"].drop_nulls().min() > 0  # every round's view was temperature-scaled
    inside = curves.filter(pl.col("strategy") == "info_coevolution")["vote_inside"].drop_nulls()
    assert len(inside) and inside.is_between(0.3, 0.7).all()  # its median radius holds about half
    annotations = pl.read_parquet(root / "annotations.parquet")
    assert (
        annotations.group_by(["strategy", "seed"])
        .agg(pl.col("sample_id").is_unique().all())["sample_id"]
        .all()
    )
    first = {
        name: file_md5(root / name) for name in ("curves.parquet", "annotations.parquet", "summary.parquet")
    }
    shutil.rmtree(root)
    run_pipeline(workspace)
    assert first == {name: file_md5(root / name) for name in first}


@pytest.mark.parametrize(
    ("overrides", "table", "stage", "message"),
    [
        ((), pl.DataFrame({"f0": [1.0, 2.0], "label": [0, 1]}), "data-table", "label column 'y' not found"),
        (("info_coevolution.budget=500",), None, "info_coevolution-prepare",
         "info_coevolution.budget 500 exceeds the pool size 86"),
        (("common.datasets.table.split_column=part",), "test-only", "data-table",
         "no 'train' rows (split values: test)"),  # caught by the data step, before any paper step
        (("info_coevolution.strategies.random.strategy=entropy",), None, "info_coevolution-prepare",
         "strategies.random: unknown annotation strategy 'entropy'"),
        (("info_coevolution.budget=1.5",), None, "info_coevolution-prepare", "a count above 1 must be a whole"),
    ],
    ids=["no-label-column", "budget-above-pool", "empty-pool", "unknown-strategy", "fractional-count"],
)  # fmt: skip
def test_bad_input_fails_clearly_without_outputs(workspace, overrides, table, stage, message):
    set_params(workspace, *overrides)
    if isinstance(table, pl.DataFrame):
        table.write_parquet(workspace / "mine.parquet")
    elif table == "test-only":
        wide_table().with_columns(pl.lit("test").alias("part")).write_parquet(workspace / "mine.parquet")
    if stage != "data-table":
        run_pipeline(workspace, ["data-table"])
    result = run_cli(["stage", stage], workspace)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert not (workspace / "data" / "info_coevolution").exists()
    assert not list(workspace.glob(".icml25-staging-*"))
