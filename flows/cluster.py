"""Experiments on a Dask cluster whose workers are other machines, the DVC way: every worker keeps its own clone.

The coordinator names a git remote that every machine can reach (the project's commit must be pushed there) and
whose committed `.dvc/config` names a default DVC remote every machine can reach (S3, SSH, a shared folder).
Each job, on whichever worker Dask gives it: clone (once per worker) or fetch, check out the commit, `dvc pull`
what the paper's pipeline already has, `dvc exp run` with the job's overrides, `dvc exp push` the experiment
(git refs to the git remote, outputs to the DVC remote). The coordinator then `dvc exp pull`s each experiment,
so it shows in `dvc exp show` and `icml25 audit --exp` there.

Workers are started from an installed checkout of this project (`make setup`), for example
`ICML25_WORKER_HOME=/scratch/icml25 dask worker tcp://scheduler:8786 --nthreads 1`.
"""

from __future__ import annotations

import hashlib
import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from stages.core.dvc_cli import run_dvc
from stages.core.errors import PipelineError
from stages.core.git import git_output
from stages.platform.experiments import run_experiment, validate_overrides

WORKER_HOME_ENV = "ICML25_WORKER_HOME"
DEFAULT_WORKER_HOME = Path.home() / ".cache" / "icml25-worker"
GIT_IDENTITY = {"user.name": "icml25 worker", "user.email": "icml25-worker@localhost"}


@dataclass(frozen=True)
class RemoteJob:
    """One experiment for a worker: the project's git URL and commit, the paper, its overrides, its name."""

    git_url: str
    commit: str
    paper: str
    overrides: tuple[str, ...]
    name: str


@dataclass(frozen=True)
class RemoteResult:
    """Where a job ran: the experiment's name, the worker's host and the clone it used."""

    name: str
    host: str
    clone: str


def worker_clone(git_url: str, commit: str, home: Path) -> Path:
    """This worker's clone of `git_url` (made once, fetched afterwards), checked out at `commit`."""
    folder = home / "clones" / hashlib.sha256(git_url.encode()).hexdigest()[:12]
    if not (folder / ".git").is_dir():
        folder.parent.mkdir(parents=True, exist_ok=True)
        git_output(folder.parent, "clone", "-q", git_url, str(folder))
    else:
        git_output(folder, "fetch", "-q", "origin")
    for key, value in GIT_IDENTITY.items():  # DVC commits each experiment
        if not git_output(folder, "config", "--get", "--default", "", key).strip():
            git_output(folder, "config", key, value)
    git_output(folder, "checkout", "-q", "--detach", commit)
    return folder


def worker_home() -> Path:
    """Where this worker keeps its clones: `$ICML25_WORKER_HOME`, else ~/.cache/icml25-worker."""
    return Path(os.environ.get(WORKER_HOME_ENV) or DEFAULT_WORKER_HOME)


def checkout_for(git_url: str, commit: str, paper: str) -> Path:
    """This worker's clone at `commit`, with what the DVC remote already has of the paper's pipeline."""
    clone = worker_clone(git_url, commit, worker_home())
    run_dvc(["pull", "--allow-missing", "--with-deps", f"{paper}-claims"], clone, capture=True)
    return clone


def push_experiment(clone: Path, name: str) -> None:
    """`dvc exp push origin <name>`: the experiment's git refs to the clone's origin, its outputs to the
    project's default DVC remote."""
    run_dvc(["exp", "push", "origin", name], clone, capture=True, lock=False)


def run_on_worker(job: RemoteJob) -> RemoteResult:
    """Run one experiment in this worker's own clone and push it (runs on a Dask worker)."""
    clone = checkout_for(job.git_url, job.commit, job.paper)
    result = run_experiment(job.paper, list(job.overrides), job.name, clone)
    push_experiment(clone, result.name)
    return RemoteResult(result.name, socket.gethostname(), str(clone))


def pushed_commit(workspace: Path, git_remote: str) -> tuple[str, str]:
    """(URL of `git_remote`, HEAD's commit), refusing a dirty workspace, a project without a default DVC remote,
    or a commit the git remote lacks."""
    url = git_output(workspace, "remote", "get-url", git_remote).strip()
    commit = git_output(workspace, "rev-parse", "HEAD").strip()
    if git_output(workspace, "status", "--porcelain", "--untracked-files=no").strip():
        raise PipelineError(f"{workspace}: commit your changes first (workers check out commits, not files)")
    try:
        run_dvc(["remote", "default", "--project"], workspace, capture=True, lock=False)
    except PipelineError:
        raise PipelineError(
            f"{workspace}/.dvc/config names no default DVC remote: workers push their outputs there "
            "(`dvc remote add -d <name> <url>` and commit .dvc/config)"
        ) from None
    git_output(workspace, "fetch", "-q", git_remote)
    remote_branches = git_output(workspace, "branch", "-r", "--contains", commit, "--list", f"{git_remote}/*")
    if not remote_branches.strip():
        raise PipelineError(
            f"commit {commit[:12]} is not on git remote '{git_remote}': `git push {git_remote}` it first"
        )
    return url, commit


def job_names(paper: str, count: int) -> list[str]:
    """Distinct experiment names for a sweep: `<paper>-<UTC time>-<index>`."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return [f"{paper}-{stamp}-{index}" for index in range(count)]


def run_sweep_on_cluster(
    paper: str,
    sweep: list[list[str]],
    scheduler: str,
    workspace: str | Path = ".",
    git_remote: str = "origin",
) -> list[RemoteResult]:
    """One experiment per override set on the Dask cluster at `scheduler`, spread over its workers, then
    pulled into `workspace` (its git remote `git_remote` and DVC default remote are the shared stores)."""
    from distributed import Client

    workspace = Path(workspace).resolve()
    for overrides in sweep:
        validate_overrides(paper, overrides, workspace)
    git_url, commit = pushed_commit(workspace, git_remote)
    jobs = [
        RemoteJob(git_url, commit, paper, tuple(overrides), name)
        for overrides, name in zip(sweep, job_names(paper, len(sweep)), strict=True)
    ]
    with Client(scheduler, timeout="60s") as client:
        workers = sorted(client.scheduler_info()["workers"])
        if not workers:
            raise PipelineError(f"the Dask scheduler at {scheduler} has no workers")
        futures = [
            client.submit(
                run_on_worker, job, pure=False, workers=[workers[i % len(workers)]], allow_other_workers=True
            )
            for i, job in enumerate(jobs)
        ]
        results = client.gather(futures)
    for result in results:
        run_dvc(["exp", "pull", git_remote, result.name], workspace, capture=True, lock=False)
    return results
