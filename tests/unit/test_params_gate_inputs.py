"""The params gate refuses a user's file that its stage cannot use, before DVC deletes any output."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from stages.core.errors import PipelineError
from stages.core.params import apply_overrides, read_params_file, write_params_file
from stages.platform.params_check import check_params


@pytest.fixture
def workspace(tmp_path):
    """The project's params in a scratch folder (relative paths are the folder's), with a good user table."""
    rng = np.random.default_rng(0)
    pl.DataFrame({"f1": rng.normal(size=20), "label": np.arange(20) % 2}).write_parquet(
        tmp_path / "good.parquet"
    )
    return tmp_path


def _check(workspace, *overrides: str) -> None:
    params = apply_overrides(read_params_file("params.yaml"), list(overrides))
    write_params_file(params, workspace / "params.yaml")
    check_params(workspace / "params.yaml", workspace)


def test_the_projects_params_pass(workspace):
    _check(workspace, "common.datasets.table.path=good.parquet")


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "common.datasets.table.path=/etc/passwd",
            "common.datasets.table.path: /etc/passwd is not a readable Parquet",
        ),
        ("common.datasets.table.path=/etc", "common.datasets.table.path: /etc is not a file"),
        ("common.datasets.table.label_column=target", "good.parquet has no column(s) target"),
        (
            "common.datasets.fashion_mnist.source_dir=/nonexistent",
            "fashion_mnist.source_dir: /nonexistent not found",
        ),
        ("common.datasets.fashion_mnist.source_dir=/etc", "lacks train-images-idx3-ubyte.gz"),
        (
            "common.datasets.rotten_tomatoes.corpus_path=/etc",
            "rotten_tomatoes.corpus_path: /etc is not a file",
        ),
        ("activation_comm.corpus_path=missing.csv", "activation_comm.corpus_path: missing.csv not found"),
    ],
)
def test_an_unusable_input_is_named_before_any_stage_runs(workspace, override, message):
    with pytest.raises(PipelineError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _check(workspace, "common.datasets.table.path=good.parquet", override)


def test_a_kindel_folder_without_the_kindel_files_is_named(workspace):
    with pytest.raises(PipelineError, match=r"kindel\.folder: /etc lacks sim_1M\.parquet"):
        _check(
            workspace, "common.datasets.table.path=good.parquet", "kindel.source=folder", "kindel.folder=/etc"
        )


def test_a_path_another_stage_produces_is_not_checked_before_that_stage_runs(workspace):
    _check(workspace)  # table.path defaults to data/raw/digits/table.parquet, which data-digits writes
