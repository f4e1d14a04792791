"""A user's command never destroys what the user has: not a folder, not its input, not a second output."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import polars as pl
import pytest

from stages.core.errors import PipelineError
from stages.core.io import OWNER_MARK, OutputTransaction, write_json


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "in.parquet"
    pl.DataFrame(
        {"f1": rng.normal(size=40), "f2": rng.normal(size=40), "label": np.arange(40) % 2}
    ).write_parquet(path)
    return path


def _icml25(*args: str, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "ICML25_ANY_INTERPRETER": "1"}
    return subprocess.run(
        [sys.executable, "-m", "stages", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def _refused(done: subprocess.CompletedProcess, *words: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in done.stderr


def test_a_report_path_that_is_the_users_folder_is_refused_and_the_folder_kept(tmp_path, table):
    folder = tmp_path / "userdir"
    folder.mkdir()
    (folder / "mine.txt").write_text("keep")
    _refused(
        _icml25("validate", "--input", str(table), "--report", str(folder), cwd=tmp_path), "userdir", "folder"
    )
    assert (folder / "mine.txt").read_text() == "keep"


def test_an_output_that_is_the_input_is_refused_and_the_input_unchanged(tmp_path, table):
    before = table.read_bytes()
    done = _icml25("synthesize", "--input", str(table), "--output", str(table), cwd=tmp_path)
    _refused(done, "--output", "is also --input")
    assert table.read_bytes() == before


def test_two_outputs_naming_one_path_are_refused_before_any_work(tmp_path, table):
    out = tmp_path / "same.parquet"
    done = _icml25(
        "synthesize", "--input", str(table), "--output", str(out), "--report", str(out), cwd=tmp_path
    )
    _refused(done, "--report", "--output names the same path")
    assert not out.exists()


def test_an_output_under_proc_is_one_line_naming_it(tmp_path, table):
    done = _icml25("validate", "--input", str(table), "--report", "/proc/icml25-report.json", cwd=tmp_path)
    _refused(done, "/proc/icml25-report.json", "cannot write there")


def test_a_users_command_replaces_a_folder_it_wrote_but_not_another(tmp_path):
    target = tmp_path / "audit"
    with OutputTransaction(tmp_path, owner="icml25 test") as transaction:
        write_json({"run": 1}, transaction.path(target) / "a.json")
    assert (target / OWNER_MARK).is_file()
    with OutputTransaction(tmp_path, owner="icml25 test") as transaction:  # its own folder: replaced
        write_json({"run": 2}, transaction.path(target) / "a.json")
    assert (target / "a.json").read_text().strip().endswith("}")
    users = tmp_path / "users"
    users.mkdir()
    (users / "notes.txt").write_text("mine")
    refused = pytest.raises(PipelineError, match="users: an existing folder this command did not write")
    with refused, OutputTransaction(tmp_path, owner="icml25 test") as transaction:
        write_json({"run": 3}, transaction.path(users) / "a.json")
    assert (users / "notes.txt").read_text() == "mine"


def test_a_stage_transaction_still_replaces_its_declared_folder(tmp_path):
    target = tmp_path / "figures"
    target.mkdir()
    (target / "old.png").write_text("old")
    with OutputTransaction(tmp_path) as transaction:
        write_json({}, transaction.path(target) / "new.json")
    assert sorted(path.name for path in target.iterdir()) == ["new.json"]
