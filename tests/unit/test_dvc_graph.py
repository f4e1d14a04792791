"""Reading a paper's upstream stages out of a dvc.lock (what an audit of an experiment needs)."""

from __future__ import annotations

from stages.core.dvc_graph import locked_paper_stages


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
