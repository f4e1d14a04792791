"""Params are checked before DVC deletes an output: a bad value, a typo key, an unknown section or a missing
user file fails the `params` stage, naming the key or file, and every earlier output is still there."""

from __future__ import annotations

import subprocess

import pytest

from stages.core.dvc_cli import dvc_executable, run_dvc, subprocess_env
from stages.core.io import file_md5
from stages.core.params import read_params_file, write_params_file
from tests.conftest import mrmc_selected_copy

pytestmark = pytest.mark.integration

KEPT = ("data/mrmc/pool.parquet", "data/mrmc/test.parquet", "data/mrmc/validation.json")


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    return mrmc_selected_copy(tmp_path_factory, tmp_path_factory.mktemp("gate") / "ws")


def _dvc(workspace, *args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [dvc_executable(), *args],
        cwd=workspace,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        check=False,
    )


def _edit(workspace, edit) -> str:
    path = workspace / "params.yaml"
    original = path.read_text()
    raw = read_params_file(path)
    edit(raw)
    write_params_file(raw, path)
    return original


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda raw: raw["mrmc"].update(pool_size="abc"), "mrmc.pool_size"),
        (lambda raw: raw["mrmc"].update(pool_sise=10000), "mrmc.pool_sise: Extra inputs are not permitted"),
        (lambda raw: raw.update(mrmcc={"pool_size": 1}), "unknown section 'mrmcc'"),
        (
            lambda raw: raw["common"]["datasets"].update(
                table={**raw["common"]["datasets"]["table"], "path": "data/nowhere.parquet"}
            ),
            "common.datasets.table.path: data/nowhere.parquet not found",
        ),
    ],
    ids=["bad-value", "typo-key", "unknown-section", "missing-user-file"],
)
def test_dvc_repro_fails_in_the_params_stage_and_keeps_outputs(prepared, edit, message):
    before = {path: file_md5(prepared / path) for path in KEPT}
    original = _edit(prepared, edit)
    try:
        result = _dvc(prepared, "repro", "mrmc-claims")
        assert result.returncode != 0
        assert message in result.stdout + result.stderr
        assert "Running stage 'params'" in result.stdout
        assert "Running stage 'mrmc-prepare'" not in result.stdout
        assert {path: file_md5(prepared / path) for path in KEPT} == before
    finally:
        (prepared / "params.yaml").write_text(original)


def test_dvc_exp_run_with_a_typo_key_fails_and_keeps_outputs(prepared):
    before = {path: file_md5(prepared / path) for path in KEPT}
    original = (prepared / "params.yaml").read_text()
    try:
        result = _dvc(prepared, "exp", "run", "-S", "+mrmc.pool_sise=10000", "mrmc-claims")
        assert result.returncode != 0
        assert "mrmc.pool_sise: Extra inputs are not permitted" in result.stdout + result.stderr
        assert {path: file_md5(prepared / path) for path in KEPT} == before
    finally:
        (prepared / "params.yaml").write_text(original)


def test_a_valid_edit_reruns_the_check_and_nothing_that_did_not_read_it(prepared):
    original = _edit(prepared, lambda raw: raw["coreset"].update(budget=0.25))
    try:
        result = run_dvc(["repro", "mrmc-prepare"], prepared, capture=True)
        assert "Running stage 'params'" in result.stdout
        assert "Stage 'mrmc-prepare' didn't change, skipping" in result.stdout
    finally:
        (prepared / "params.yaml").write_text(original)
