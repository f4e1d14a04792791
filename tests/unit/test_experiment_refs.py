"""Experiment names come from DVC's git refs; DVC's own bookkeeping refs are not experiments."""

from __future__ import annotations

import pytest

from stages.core.errors import PipelineError
from stages.core.git import git_output
from stages.platform.experiments import experiment_revs


def _git(folder, *args: str) -> str:
    return git_output(folder, *args).strip()


def test_named_experiments_on_any_baseline_and_nothing_else(tmp_path):
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "base")
    head = _git(tmp_path, "rev-parse", "HEAD")
    other_baseline = "0123456789abcdef0123456789abcdef01234567"
    refs = {
        f"refs/exps/{head[:2]}/{head[2:]}/small-pool": head,
        f"refs/exps/{other_baseline[:2]}/{other_baseline[2:]}/older-run": head,
        "refs/exps/exec/EXEC_HEAD": head,
        "refs/exps/celery/stash": head,
        "refs/exps/stash": head,
        f"refs/exps/temp/{head[:2]}/{head[2:]}": head,
    }
    for ref, rev in refs.items():
        _git(tmp_path, "update-ref", ref, rev)
    assert experiment_revs(tmp_path) == {"small-pool": head, "older-run": head}


def test_a_folder_that_is_not_a_git_repository_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))  # no repository above it either
    with pytest.raises(PipelineError, match="for-each-ref"):
        experiment_revs(tmp_path)
