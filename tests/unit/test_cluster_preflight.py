"""Before a cluster sweep sends anything to a worker, the coordinator refuses what a worker could not fetch: a
project without a committed default DVC remote, uncommitted changes, a commit the git remote lacks."""

from __future__ import annotations

import subprocess

import pytest

from flows.cluster import job_names, pushed_commit
from stages.core.dvc_cli import run_dvc
from stages.core.errors import PipelineError
from stages.platform.smoke import GIT, commit_all


@pytest.fixture
def project(tmp_path):
    origin, work = tmp_path / "origin.git", tmp_path / "work"
    subprocess.run([*GIT, "init", "-q", "--bare", str(origin)], check=True)
    subprocess.run([*GIT, "init", "-q", str(work)], check=True)
    run_dvc(["init", "-q"], work, capture=True, lock=False)  # the workspace lock would make .dvc first
    (work / "params.yaml").write_text("a: 1\n")
    commit_all(work, "start")
    subprocess.run([*GIT, "remote", "add", "origin", str(origin)], cwd=work, check=True)
    return work, origin


def test_a_project_without_a_default_dvc_remote_is_refused(project):
    work, _ = project
    with pytest.raises(PipelineError, match="names no default DVC remote"):
        pushed_commit(work, "origin")


def test_uncommitted_changes_and_unpushed_commits_are_refused(project, tmp_path):
    work, origin = project
    run_dvc(["remote", "add", "-d", "shared", str(tmp_path / "dvc-remote")], work, capture=True)
    with pytest.raises(PipelineError, match="commit your changes first"):
        pushed_commit(work, "origin")
    commit_all(work, "remote")
    with pytest.raises(PipelineError, match="is not on git remote 'origin'"):
        pushed_commit(work, "origin")
    subprocess.run([*GIT, "push", "-q", "origin", "HEAD:refs/heads/main"], cwd=work, check=True)
    url, commit = pushed_commit(work, "origin")
    assert url == str(origin) and len(commit) == 40


def test_job_names_are_distinct_valid_experiment_names():
    names = job_names("mrmc", 3)
    assert len(set(names)) == 3 and all(name.startswith("mrmc-") and " " not in name for name in names)
