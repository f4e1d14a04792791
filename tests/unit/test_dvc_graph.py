"""Reading a paper's upstream stages out of a dvc.lock (what an audit of an experiment needs), and DVC's params
files parsed once per check session."""

from __future__ import annotations

import os

from stages.core.dvc_graph import locked_paper_stages, params_read_once


def stage(deps=(), outs=()):
    return {"deps": [{"path": path} for path in deps], "outs": [{"path": path} for path in outs]}


def test_lock_stages_follow_the_deps_that_ran():
    lock = {
        "data-images": stage(["stages/datasets"], ["data/raw/images/table.parquet"]),
        "data-text": stage(["stages/datasets"], ["data/raw/text/table.parquet"]),
        "paper-prepare": stage(["data/raw/text/table.parquet"], ["data/paper/pool.parquet"]),
        "paper-train": stage(["data/paper/pool.parquet"], ["data/paper/models"]),
        "paper-claims": stage(["data/paper/models/index.json"], ["data/paper/claims.json"]),
        "other-prepare": stage(["data/raw/images/table.parquet"], ["data/other/pool.parquet"]),
    }
    assert locked_paper_stages(lock, "paper") == ["data-text", "paper-prepare", "paper-train", "paper-claims"]


def test_params_file_is_parsed_once_per_version(tmp_path, monkeypatch):
    from dvc.dependency import param
    from dvc.fs import LocalFileSystem

    path = tmp_path / "params.yaml"
    path.write_text("a: {b: 1, c: 2}\n")
    os.utime(path, ns=(10**9, 10**9))
    parsed = []
    original = param.load_path
    monkeypatch.setattr(
        param, "load_path", lambda *args, **kwargs: parsed.append(1) or original(*args, **kwargs)
    )
    counting = param.load_path
    fs = LocalFileSystem()
    with params_read_once():
        first = [param.read_param_file(fs, str(path), ["a.b"], flatten=True) for _ in range(5)]
        path.write_text("a: {b: 2, c: 2}\n")  # the same size: only the modification time tells
        os.utime(path, ns=(2 * 10**9, 2 * 10**9))
        changed = param.read_param_file(fs, str(path), ["a.b"], flatten=True)
    assert first == [{"a.b": 1}] * 5 and changed == {"a.b": 2}
    assert len(parsed) == 2
    assert param.load_path is counting  # the patch is undone on exit: every read parses again
    param.read_param_file(fs, str(path), ["a.b"], flatten=True)
    assert len(parsed) == 3
