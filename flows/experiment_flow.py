"""Prefect flows that run papers as DVC experiments (isolated workspaces), with an audit artifact.

- `experiment_flow(paper, overrides, name)`: validate overrides, `dvc exp run --temp`, attach the audit.
- `paper_deployment_flow(paper)`: the same flow with the paper's typed params model as its parameter, so a
  deployment's run form in the Prefect UI shows every param with its current value.
- `all_papers_flow()`: every registered paper (or a sweep of override sets) fanned out on a Dask cluster.
"""

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact

from stages.audit import audit_markdown, audit_record, flatten
from stages.core.params import PARAMS_FILE, read_params_file
from stages.experiments import run_experiment, validate_overrides

DASK_ADDRESS_ENV = "ICML25_DASK_ADDRESS"
LOCAL_CLUSTER = {
    "n_workers": 2,
    "threads_per_worker": 1,
    "processes": True,
    "host": "127.0.0.1",
    "dashboard_address": "127.0.0.1:0",
}


@task(name="dvc-experiment")
def run_experiment_task(paper: str, overrides: list[str], name: str | None, workspace: str) -> str:
    """One DVC experiment; fails with the stage's own message."""
    logger = get_run_logger()
    logger.info("dvc exp run --temp %s-claims %s", paper, " ".join(f"-S {item}" for item in overrides))
    result = run_experiment(paper, overrides, name, workspace)
    logger.info("experiment %s at %s", result.name, result.rev)
    return result.name


@flow(name="paper-experiment")
def experiment_flow(
    paper: str, overrides: list[str] | None = None, name: str | None = None, workspace: str = "."
) -> str:
    """Validate the overrides (before any work), run the experiment, publish its audit as an artifact."""
    overrides = list(overrides or [])
    workspace = str(Path(workspace).resolve())
    validate_overrides(paper, overrides, workspace)
    exp_name = run_experiment_task(paper, overrides, name, workspace)
    create_markdown_artifact(
        key=f"{paper.replace('_', '-')}-audit",
        markdown=audit_markdown(audit_record(paper, exp_name, workspace)),
        description=f"audit of experiment {exp_name}",
    )
    return exp_name


def overrides_between(section: str, current: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    """`section.key=value` overrides turning the `current` section into `wanted` (leaf by leaf)."""
    before, after = flatten(current), flatten(wanted)
    changed = sorted(key for key in after if before.get(key) != after[key])
    return [
        f"{section}.{key}={yaml.safe_dump(after[key], default_flow_style=True).strip().removesuffix('...').strip()}"
        for key in changed
    ]


def paper_deployment_flow(paper: str, workspace: str = ".") -> Callable[..., str]:
    """A flow whose parameter is the paper's params model, defaulting to the workspace's params.yaml."""
    from stages.core.params import validate_section
    from stages.papers.registry import PAPERS

    pipeline = PAPERS.get(paper).pipeline
    raw_section = read_params_file(Path(workspace) / PARAMS_FILE)[pipeline.params_section]
    defaults = validate_section(pipeline.model(), raw_section, pipeline.params_section)

    def run_paper(params: Any = defaults, experiment_name: str | None = None) -> str:
        current = read_params_file(Path(workspace) / PARAMS_FILE)[pipeline.params_section]
        wanted = pipeline.model().model_validate(params).model_dump(mode="json")
        canonical = pipeline.model().model_validate(current).model_dump(mode="json")
        overrides = overrides_between(pipeline.params_section, canonical, wanted)
        return experiment_flow(paper, overrides, experiment_name, workspace)

    run_paper.__signature__ = inspect.Signature(
        [
            inspect.Parameter(
                "params",
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                default=defaults,
                annotation=pipeline.model(),
            ),
            inspect.Parameter(
                "experiment_name",
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                default=None,
                annotation=str | None,
            ),
        ],
        return_annotation=str,
    )
    run_paper.__annotations__ = {
        "params": pipeline.model(),
        "experiment_name": str | None,
        "return": str,
    }
    run_paper.__name__ = run_paper.__qualname__ = f"run_{paper}"
    run_paper.__module__ = (
        "flows.deployments"  # where served runs import it from (module attribute run_<paper>)
    )
    return flow(name=f"{paper}", description=f"Run {paper} as a DVC experiment with these params")(run_paper)


def dask_task_runner(address: str | None = None):
    """A DaskTaskRunner on the scheduler at `address` (or $ICML25_DASK_ADDRESS), else a LocalCluster of 2
    worker processes whose scheduler and dashboard listen on 127.0.0.1 only."""
    import os

    from prefect_dask import DaskTaskRunner

    address = address or os.environ.get(DASK_ADDRESS_ENV)
    if address:
        return DaskTaskRunner(address=address)
    return DaskTaskRunner(cluster_kwargs=LOCAL_CLUSTER)


@flow(name="all-papers", task_runner=dask_task_runner())
def all_papers_flow(
    papers: list[str] | None = None, sweep: list[list[str]] | None = None, workspace: str = "."
) -> list[str]:
    """Run papers (default: all registered) — or one paper per override set of `sweep` — in parallel on Dask.

    Each run is a temporary DVC experiment, so runs never share a workspace.
    """
    from stages.papers.registry import PAPERS

    workspace = str(Path(workspace).resolve())
    papers = papers or PAPERS.names()
    jobs = [(paper, overrides) for paper in papers for overrides in (sweep or [[]])]
    for paper, overrides in jobs:
        validate_overrides(paper, overrides, workspace)
    futures = [run_experiment_task.submit(paper, overrides, None, workspace) for paper, overrides in jobs]
    return [future.result() for future in futures]


def run_all_papers(
    papers: list[str] | None = None,
    sweep: list[list[str]] | None = None,
    workspace: str = ".",
    dask_address: str | None = None,
) -> list[str]:
    """Run the all-papers flow on the Dask cluster chosen now (not at import)."""
    runner = dask_task_runner(dask_address)
    return all_papers_flow.with_options(task_runner=runner)(papers=papers, sweep=sweep, workspace=workspace)
