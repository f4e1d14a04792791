"""Prefect work pools: one deployment per paper on a `process` work pool, picked up by any
`prefect worker start --pool <pool>` process, on any machine, each run in that worker's own clone.

`icml25 deploy-pool` pins the project's git URL and pushed commit in the work pool's base job template (a
fixed job environment, and a variables schema that admits no job variable at all), then registers the
deployments against `$PREFECT_API_URL` (no deployment parameter names a repository or folder). So neither a
deployment nor a run can change what a worker clones or runs: the server refuses a run's `job_variables`
(`env`, `command`, `working_dir`, ...) with 422 before any worker sees it. A run, on the worker that picks it
up: clone or fetch into `$ICML25_WORKER_HOME`, check out that commit, `dvc pull`, `dvc exp run` with the
form's params (its output streamed to the run log), `dvc exp push origin`, then the summary and audit as the
run's artifacts. `dvc exp pull origin <name>` brings the experiment to any other clone.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

from prefect import get_run_logger

from flows.cluster import checkout_for, push_experiment, pushed_commit
from flows.experiment_flow import (
    attach_results,
    form_deployment,
    form_overrides,
    paper_flow_options,
    params_form_flow,
    run_experiment_task,
)
from stages.core.errors import PipelineError
from stages.papers.registry import PAPERS

GIT_URL_ENV = "ICML25_GIT_URL"
GIT_COMMIT_ENV = "ICML25_GIT_COMMIT"
PROJECT_ROOT = Path(__file__).resolve().parent.parent  # the installed checkout: the forms' defaults


def pool_paper_flow(paper: str, defaults_from: str | Path = PROJECT_ROOT):
    """The work-pool flow of `paper`: the same form as the served one; the run happens in the worker's clone."""

    def body(params: Any, name: str) -> str:
        git_url, commit = os.environ.get(GIT_URL_ENV), os.environ.get(GIT_COMMIT_ENV)
        if not git_url or not commit:
            raise PipelineError(
                f"{GIT_URL_ENV} / {GIT_COMMIT_ENV} are not set: this flow runs on a work pool "
                "(register it with `icml25 deploy-pool`)"
            )
        clone = checkout_for(git_url, commit, paper)
        logger = get_run_logger()
        logger.info("worker %s: clone %s at %s", socket.gethostname(), clone, commit[:12])
        exp_name = run_experiment_task(paper, form_overrides(paper, params, clone), name, str(clone))
        push_experiment(clone, exp_name)
        logger.info(
            "pushed experiment %s: `dvc exp pull origin %s` brings it to any clone", exp_name, exp_name
        )
        attach_results(paper, exp_name, clone)
        return exp_name

    run_paper = params_form_flow(paper, defaults_from, body, suffix="_on_pool")
    run_paper.__module__ = (
        __name__  # where a worker's flow process imports it from (attribute run_<paper>_on_pool)
    )
    description = f"Run {paper} as a DVC experiment on a work-pool worker, in its own clone"
    return paper_flow_options(paper, description)(run_paper)


POOL_FLOWS = {paper: pool_paper_flow(paper) for paper in PAPERS.names()}
for _paper, _flow in POOL_FLOWS.items():
    globals()[f"run_{_paper}_on_pool"] = _flow


def deploy_to_pool(pool: str, workspace: str | Path = ".", git_remote: str = "origin") -> list[str]:
    """Create the `process` work pool if needed and register every paper's deployment on it, bound to the
    workspace's pushed commit; returns the deployment names (`<paper>/<paper>-pool`)."""
    from prefect import deploy
    from prefect.types.entrypoint import EntrypointType

    git_url, commit = pushed_commit(Path(workspace).resolve(), git_remote)
    ensure_process_pool(pool, pinned_job_template(git_url, commit))
    deployments = [
        form_deployment(paper_flow, paper, name=f"{paper}-pool", entrypoint_type=EntrypointType.MODULE_PATH)
        for paper, paper_flow in POOL_FLOWS.items()
    ]
    deploy(
        *deployments,
        work_pool_name=pool,
        build=False,
        push=False,
        print_next_steps_message=False,
        ignore_warnings=True,
    )
    return [f"{paper}/{paper}-pool" for paper in POOL_FLOWS]


# a non-empty schema (Prefect skips validation for an empty one) that admits no job variable
NO_JOB_VARIABLES = {"type": "object", "properties": {}, "additionalProperties": False}


def pinned_job_template(git_url: str, commit: str) -> dict[str, Any]:
    """A process-worker job template whose every field is fixed: the environment carries the repository and
    commit, the command is the worker's own (None), and no deployment or run may set a job variable."""
    return {
        "job_configuration": {
            "command": None,
            "env": {GIT_URL_ENV: git_url, GIT_COMMIT_ENV: commit},
            "labels": {},
            "name": None,
            "stream_output": True,
            "working_dir": None,
        },
        "variables": NO_JOB_VARIABLES,
    }


def ensure_process_pool(pool: str, template: dict[str, Any]) -> None:
    """The work pool `pool` of type `process` with `template` as its base job template, created if missing or
    updated (an existing pool of another type is refused)."""
    import asyncio

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate, WorkPoolUpdate
    from prefect.exceptions import ObjectNotFound

    async def ensure() -> None:
        async with get_client() as client:
            try:
                existing = await client.read_work_pool(pool)
            except ObjectNotFound:
                create = WorkPoolCreate(name=pool, type="process", base_job_template=template)
                await client.create_work_pool(create)
                return
            if existing.type != "process":
                raise PipelineError(f"work pool {pool!r} is of type {existing.type!r}, not 'process'")
            await client.update_work_pool(pool, WorkPoolUpdate(base_job_template=template))

    asyncio.run(ensure())
