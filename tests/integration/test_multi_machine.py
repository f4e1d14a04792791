"""Several machines, proven with several processes on this one: a bare git repository and a folder DVC remote
are the shared stores; each worker process has its own folder (its own clone); the coordinator pulls the
experiments and audits them. Once on a Dask cluster (`dask scheduler` + two `dask worker`s), once on a Prefect
process work pool (a Prefect server + two `prefect worker start`s)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from stages.core.dvc_cli import run_dvc, subprocess_env
from stages.platform.audit import audit_record
from stages.platform.experiments import experiment_revs
from stages.platform.smoke import GIT, commit_all
from tests.conftest import clone_with_outputs, free_port

pytestmark = pytest.mark.integration

QUIET = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Project:
    """The coordinator's clone, whose git remote `team` and default DVC remote every worker reaches."""

    coordinator: Path
    git_remote: str = "team"


@pytest.fixture(scope="module")
def project(mrmc_baseline, tmp_path_factory) -> Project:
    root = tmp_path_factory.mktemp("multi-machine")
    origin, dvc_remote, coordinator = root / "origin.git", root / "dvc-remote", root / "coordinator"
    subprocess.run([*GIT, "init", "-q", "--bare", str(origin)], check=True)
    clone_with_outputs(mrmc_baseline, coordinator, "mrmc-claims")
    run_dvc(["remote", "add", "-d", "shared", str(dvc_remote)], coordinator, capture=True, lock=False)
    run_dvc(["push", "mrmc-claims", "--with-deps"], coordinator, capture=True)  # workers start from them
    commit_all(coordinator, "a shared DVC remote for the workers")
    subprocess.run([*GIT, "remote", "add", "team", str(origin)], cwd=coordinator, check=True)
    subprocess.run([*GIT, "push", "-q", "team", "HEAD:refs/heads/main"], cwd=coordinator, check=True)
    return Project(coordinator)


def _stop(processes: list[subprocess.Popen]) -> None:
    for process in reversed(processes):
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def worker_homes(tmp_path: Path) -> list[Path]:
    homes = [tmp_path / f"machine-{index}" for index in range(2)]
    for home in homes:
        home.mkdir()
    return homes


def assert_pulled_and_audited(project: Project, names: list[str], ratios: list[float]) -> None:
    assert set(names) <= set(experiment_revs(project.coordinator))
    records = [audit_record("mrmc", name, project.coordinator) for name in names]
    assert [record.params["claims"]["uneven_ratio"] for record in records] == ratios
    assert all(record.claims for record in records)  # claims.json came through the DVC remote


@pytest.fixture
def dask_cluster(tmp_path) -> Iterator[tuple[str, list[Path]]]:
    """`dask scheduler` and two `dask worker` processes on 127.0.0.1, each in its own folder."""
    from distributed import Client

    address = f"tcp://127.0.0.1:{free_port()}"
    scheduler = [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1]]
    processes = [subprocess.Popen([*scheduler, "--dashboard-address", ":0"], env=subprocess_env(), **QUIET)]
    homes = worker_homes(tmp_path)
    try:
        for home in homes:
            worker = [str(BIN / "dask"), "worker", address, "--nthreads", "1", "--no-dashboard"]
            env = {**subprocess_env(), "ICML25_WORKER_HOME": str(home)}
            processes.append(
                subprocess.Popen([*worker, "--local-directory", str(home)], cwd=home, env=env, **QUIET)
            )
        with Client(address, timeout="60s") as client:
            client.wait_for_workers(2, timeout=120)
        yield address, homes
    finally:
        _stop(processes)


def test_a_sweep_runs_on_dask_workers_in_their_own_clones(project, dask_cluster):
    from flows.cluster import run_sweep_on_cluster

    address, homes = dask_cluster
    sweep = [["mrmc.claims.uneven_ratio=2.5"], ["mrmc.claims.uneven_ratio=3.5"]]
    results = run_sweep_on_cluster("mrmc", sweep, address, project.coordinator, project.git_remote)
    used = sorted(
        next(index for index, home in enumerate(homes) if r.clone.startswith(str(home))) for r in results
    )
    assert used == [0, 1]  # one job per worker, each in its own clone
    assert_pulled_and_audited(project, [result.name for result in results], [2.5, 3.5])


@pytest.fixture
def prefect_pool(tmp_path, project) -> Iterator[tuple[str, list[Path]]]:
    """A Prefect server on 127.0.0.1, the deployments on a process work pool, and two workers (one run at a
    time each), each in its own folder."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from flows.pool import deploy_to_pool
    from flows.serve import api_url, wait_for_server

    port = free_port()
    env = {**subprocess_env(), "PREFECT_HOME": str(tmp_path / "prefect-server")}
    server_command = [str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)]
    processes = [subprocess.Popen(server_command, env=env, start_new_session=True, **QUIET)]
    try:
        wait_for_server(port, processes[0])
        with temporary_settings(updates={PREFECT_API_URL: api_url(port)}):
            deploy_to_pool("icml25-test", project.coordinator, project.git_remote)
            homes = worker_homes(tmp_path)
            for index, home in enumerate(homes):
                worker_env = {
                    **subprocess_env(),
                    "PREFECT_API_URL": api_url(port),
                    "PREFECT_HOME": str(home / "prefect"),
                    "PREFECT_WORKER_QUERY_SECONDS": "1",
                    "ICML25_WORKER_HOME": str(home),
                    "ICML25_PROGRESS": "0",
                }
                worker = [
                    str(BIN / "prefect"),
                    "worker",
                    "start",
                    "--pool",
                    "icml25-test",
                    "--type",
                    "process",
                ]
                command = [*worker, "--name", f"machine-{index}", "--limit", "1"]
                processes.append(
                    subprocess.Popen(command, cwd=home, env=worker_env, start_new_session=True, **QUIET)
                )
            yield api_url(port), homes
    finally:
        _stop(processes)


def _wait_for_final_states(run_ids: list, timeout: float = 400.0) -> list:
    import asyncio

    from prefect.client.orchestration import get_client

    async def read():
        async with get_client() as client:
            return [await client.read_flow_run(run_id) for run_id in run_ids]

    deadline = time.monotonic() + timeout
    while True:
        runs = asyncio.run(read())
        if all(run.state and run.state.is_final() for run in runs):
            return runs
        assert time.monotonic() < deadline, [run.state for run in runs]
        time.sleep(2.0)


def _run_logs(run_id) -> list[str]:
    import asyncio

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId

    async def read():
        async with get_client() as client:
            return await client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[run_id])))

    return [log.message for log in asyncio.run(read())]


def assert_a_run_cannot_repoint_the_workers() -> None:
    """A run that sets the repository, the commit, the command or the folder as job variables is refused by
    the server (422) before a worker could pick it up: the pool pins them all."""
    from prefect.deployments import run_deployment

    attempts = [
        {"env": {"ICML25_GIT_URL": "https://example.invalid/other.git", "ICML25_GIT_COMMIT": "0" * 40}},
        {"command": "sh -c 'id > /tmp/owned'"},
        {"working_dir": "/tmp"},
    ]
    for job_variables in attempts:
        with pytest.raises(Exception, match="Additional properties are not allowed"):
            run_deployment("mrmc/mrmc-pool", job_variables=job_variables, timeout=0)


def test_runs_triggered_through_the_api_run_on_work_pool_workers_in_their_own_clones(project, prefect_pool):
    from prefect.deployments import run_deployment
    from prefect.settings import PREFECT_API_URL, temporary_settings

    url, homes = prefect_pool
    params = yaml.safe_load((project.coordinator / "params.yaml").read_text())["mrmc"]
    with temporary_settings(updates={PREFECT_API_URL: url}):
        assert_a_run_cannot_repoint_the_workers()
        runs = []
        for index, ratio in enumerate((2.5, 3.5)):
            form = {"mrmc": {"claims": {**params["claims"], "uneven_ratio": ratio}}}  # only what changes
            parameters = {**form, "experiment_name": f"pool-{index}"}
            runs.append(run_deployment("mrmc/mrmc-pool", parameters=parameters, timeout=0))
        finished = _wait_for_final_states([run.id for run in runs])
        assert all(run.state.is_completed() for run in finished), [run.state.message for run in finished]
        assert [run.name for run in finished] == ["pool-0", "pool-1"]
        clones = [next(m for m in _run_logs(run.id) if m.startswith("worker ")) for run in finished]
    used = sorted(next(i for i, home in enumerate(homes) if str(home) in line) for line in clones)
    assert used == [0, 1]  # each worker ran one, in its own clone
    for name in ("pool-0", "pool-1"):
        run_dvc(["exp", "pull", project.git_remote, name], project.coordinator, capture=True, lock=False)
    assert_pulled_and_audited(project, ["pool-0", "pool-1"], [2.5, 3.5])
