"""Atomic writes: a failing stage leaves no partial outputs and never damages earlier ones."""

from __future__ import annotations

import os

import polars as pl
import pytest

from stages.core.io import OutputTransaction, file_md5, read_parquet, write_json, write_parquet


def test_parquet_round_trip(tmp_path, tiny_table):
    path = tmp_path / "t.parquet"
    write_parquet(tiny_table, path)
    assert read_parquet(path).equals(tiny_table)
    assert not list(tmp_path.glob(".*.tmp"))


def test_transaction_commits_all_outputs_on_success(tmp_path):
    with OutputTransaction(tmp_path) as out:
        write_json({"a": 1}, out.path(tmp_path / "x" / "a.json"))
        write_json({"b": 2}, out.path(tmp_path / "b.json"))
        assert not (tmp_path / "b.json").exists()
    assert (tmp_path / "x" / "a.json").exists() and (tmp_path / "b.json").exists()
    assert not list(tmp_path.glob(".icml25-staging-*"))


def test_transaction_failure_leaves_previous_outputs_untouched(tmp_path):
    previous = tmp_path / "result.json"
    write_json({"old": True}, previous)
    before = file_md5(previous)
    with pytest.raises(RuntimeError), OutputTransaction(tmp_path) as out:
        write_json({"new": True}, out.path(previous))
        write_json({"other": 1}, out.path(tmp_path / "other.json"))
        raise RuntimeError("stage failed half-way")
    assert file_md5(previous) == before
    assert not (tmp_path / "other.json").exists()
    assert not list(tmp_path.glob(".icml25-staging-*"))


def test_transaction_rejects_a_promised_but_unwritten_output(tmp_path):
    with pytest.raises(RuntimeError, match="did not write"), OutputTransaction(tmp_path) as out:
        out.path(tmp_path / "never.json")
    assert not (tmp_path / "never.json").exists()


def test_json_is_canonical(tmp_path):
    write_json({"b": 1, "a": [1.5, 2]}, tmp_path / "one.json")
    write_json({"a": [1.5, 2], "b": 1}, tmp_path / "two.json")
    assert file_md5(tmp_path / "one.json") == file_md5(tmp_path / "two.json")


def test_missing_parquet_names_the_file(tmp_path):
    with pytest.raises(Exception, match=r"nope\.parquet"):
        read_parquet(tmp_path / "nope.parquet")


def test_polars_array_column_survives(tmp_path, tiny_table):
    write_parquet(tiny_table, tmp_path / "a.parquet")
    assert isinstance(pl.read_parquet(tmp_path / "a.parquet").schema["features"], pl.Array)


def test_asking_twice_for_an_output_gives_the_same_staging_path(tmp_path):
    with OutputTransaction(tmp_path) as out:
        first = out.path(tmp_path / "a.json")
        assert out.path(tmp_path / "a.json") == first
        write_json({"a": 1}, first)
    assert (tmp_path / "a.json").is_file()


def test_staging_left_by_a_dead_process_is_removed(tmp_path):
    import subprocess

    from stages.core.io import STAGING_PREFIX

    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f"{STAGING_PREFIX}{dead.pid}-abc"
    (stale / "000").mkdir(parents=True)
    alive = tmp_path / f"{STAGING_PREFIX}{os.getpid()}-live"
    alive.mkdir()
    with OutputTransaction(tmp_path) as out:
        write_json({}, out.path(tmp_path / "x.json"))
    assert not stale.exists() and alive.exists()
