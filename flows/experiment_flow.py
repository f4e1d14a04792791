"""Prefect flows that run papers as DVC experiments (isolated workspaces), with an audit artifact.

- `experiment_flow(paper, overrides, name)`: validate overrides, `dvc exp run --temp` (its output streamed to
  the run log), attach a summary (claims with verdicts, headline metrics) and the audit.
- `paper_deployment_flow(paper)`: the same, with the paper's typed params model as its parameter, so a
  deployment's run form in the Prefect UI shows every param with its current value; the run is named after its
  experiment and carries the log, summary and audit itself (no subflow).
- `all_papers_flow()`: every registered paper (or a sweep of override sets) fanned out on a Dask cluster.
"""

import inspect
import re
import shlex
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from pydantic import BaseModel

from stages.core.errors import ParamsError
from stages.core.params import PARAMS_FILE, read_params_file
from stages.platform.audit import audit_markdown, audit_record, flatten, summary_markdown
from stages.platform.experiments import run_experiment, validate_overrides

DASK_ADDRESS_ENV = "ICML25_DASK_ADDRESS"
LOCAL_CLUSTER = {
    "n_workers": 2,
    "threads_per_worker": 1,
    "processes": True,
    "host": "127.0.0.1",
    "dashboard_address": "127.0.0.1:0",
}


LONG_INPUT = re.compile(r" \(got .{80,}\)$")  # a whole section echoed back: too long for a one-line error
PROGRESS_BAR = re.compile(r"^(?P<desc>.*?):?\s*(?P<percent>\d{1,3})%\|")


class StageLog:
    """DVC's output, line by line, for a run log: every line except progress-bar redraws, of which each bar's
    first line and each further quarter (25 %, 50 %, 75 %, 100 %) pass."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        self.emit = emit
        self.quarters: dict[str, int] = {}

    def __call__(self, line: str) -> None:
        if not line.strip():
            return
        bar = PROGRESS_BAR.match(line)
        if bar:
            quarter = int(bar["percent"]) // 25
            if self.quarters.get(bar["desc"]) == quarter:
                return
            self.quarters[bar["desc"]] = quarter
        self.emit(line)


def experiment_command(paper: str, overrides: list[str], name: str | None) -> str:
    """The `dvc exp run` command line a run executes (as the user would type it)."""
    parts = ["dvc exp run --temp", f"{paper}-claims", *(f"-S {shlex.quote(item)}" for item in overrides)]
    return " ".join(parts + ([f"-n {name}"] if name else []))


@task(name="dvc-experiment")
def run_experiment_task(paper: str, overrides: list[str], name: str | None, workspace: str) -> str:
    """One DVC experiment, its stage output streamed to the run log; fails with the stage's own message."""
    logger = get_run_logger()
    logger.info(experiment_command(paper, overrides, name))
    result = run_experiment(paper, overrides, name, workspace, on_line=StageLog(logger.info))
    logger.info("experiment %s at %s", result.name, result.rev)
    return result.name


def publish_experiment(paper: str, overrides: list[str], name: str | None, workspace: str) -> str:
    """Validate, run the experiment, and attach its summary (claims with verdicts, headline metrics) and
    audit to the current flow run."""
    validate_overrides(paper, overrides, workspace)
    exp_name = run_experiment_task(paper, overrides, name, workspace)
    attach_results(paper, exp_name, workspace)
    return exp_name


def attach_results(paper: str, exp_name: str, workspace: str | Path) -> None:
    """The experiment's summary and audit as artifacts of the current flow run."""
    record = audit_record(paper, exp_name, workspace)
    slug = paper.replace("_", "-")
    create_markdown_artifact(
        key=f"{slug}-summary",
        markdown=summary_markdown(record),
        description=f"claims of experiment {exp_name}",
    )
    create_markdown_artifact(
        key=f"{slug}-audit", markdown=audit_markdown(record), description=f"audit of experiment {exp_name}"
    )


@flow(name="paper-experiment")
def experiment_flow(
    paper: str, overrides: list[str] | None = None, name: str | None = None, workspace: str = "."
) -> str:
    """Validate the overrides (before any work), run the experiment, publish its summary and audit."""
    return publish_experiment(paper, list(overrides or []), name, str(Path(workspace).resolve()))


def experiment_run_name() -> str:
    """A served run's name, which is also its experiment's: `experiment_name` if given, else
    `<paper>-<UTC time>` (a valid DVC experiment name)."""
    from prefect.runtime import flow_run

    given = flow_run.parameters.get("experiment_name")
    return given or f"{flow_run.flow_name}-{datetime.now(UTC):%Y%m%d-%H%M%S}"


def overrides_between(section: str, current: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    """`section.key=value` overrides turning the `current` section into `wanted` (leaf by leaf)."""
    before, after = flatten(current), flatten(wanted)
    changed = sorted(key for key in after if before.get(key) != after[key])
    return [
        f"{section}.{key}={yaml.safe_dump(after[key], default_flow_style=True).strip().removesuffix('...').strip()}"
        for key in changed
    ]


def form_overrides(paper: str, params: Any, workspace: str | Path) -> list[str]:
    """The `<paper>.<key>=<value>` overrides that turn `workspace`'s params.yaml into the submitted form
    (a model or the raw JSON a UI sends), validated with errors naming `<paper>.<key>`. A key the form leaves
    out keeps its params.yaml value; a key it sends replaces that key's whole value."""
    from flows.form_schema import unwrap_json_inputs
    from stages.core.params import validate_section
    from stages.papers.registry import PAPERS

    pipeline = PAPERS.get(paper).pipeline
    current = read_params_file(Path(workspace) / PARAMS_FILE)[pipeline.params_section]
    raw = params.model_dump(mode="json") if isinstance(params, BaseModel) else params
    try:
        raw = unwrap_json_inputs(raw)
    except ValueError as error:
        raise ParamsError(f"run form: invalid params: {pipeline.params_section}: {error}") from None
    if not isinstance(raw, dict):
        raise ParamsError(
            f"run form: invalid params: {pipeline.params_section}: expected an object of params, "
            f"got {type(raw).__name__}"
        )
    try:
        wanted = validate_section(pipeline.model(), {**current, **raw}, pipeline.params_section, "run form")
    except ParamsError as error:  # one line: a UI shows a run's failure message as one line
        problems = [LONG_INPUT.sub("", line.strip()) for line in str(error).splitlines()[1:]]
        raise ParamsError(f"run form: invalid params: {'; '.join(problems)}") from None
    canonical = pipeline.model().model_validate(current).model_dump(mode="json")
    return overrides_between(pipeline.params_section, canonical, wanted.model_dump(mode="json"))


def params_form_flow(paper: str, workspace: str | Path, body: Callable[[Any, str], str], suffix: str = ""):
    """A Prefect flow `run_<paper><suffix>(<section>, experiment_name)` whose first parameter, named after the
    paper's params section (`mrmc`, so errors name `mrmc.budgets`), is the paper's params model (the UI's form,
    defaulting to `workspace`'s params.yaml); `body(params, name)` runs it under the experiment's name, which
    is also the run's."""
    from stages.core.params import validate_section
    from stages.papers.registry import PAPERS

    pipeline = PAPERS.get(paper).pipeline
    section = pipeline.params_section
    raw_section = read_params_file(Path(workspace) / PARAMS_FILE)[section]
    defaults = validate_section(pipeline.model(), raw_section, section)
    signature = inspect.Signature(
        [
            inspect.Parameter(
                section,
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

    def run_paper(*args: Any, **kwargs: Any) -> str:
        from prefect.runtime import flow_run

        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return body(bound.arguments[section], bound.arguments["experiment_name"] or flow_run.name)

    run_paper.__signature__ = signature
    run_paper.__annotations__ = {section: pipeline.model(), "experiment_name": str | None, "return": str}
    run_paper.__name__ = run_paper.__qualname__ = f"run_{paper}{suffix}"
    return run_paper


def form_deployment(paper_flow: Any, paper: str, **options: Any) -> Any:
    """`paper_flow.to_deployment(**options)` with the paper's run form (`flows.form_schema`) as its schema."""
    from prefect.utilities.callables import ParameterSchema

    from flows.form_schema import form_schema
    from stages.papers.registry import PAPERS

    pipeline = PAPERS.get(paper).pipeline
    deployment = paper_flow.to_deployment(**options)
    derived = deployment._parameter_openapi_schema.model_dump(
        exclude_none=True
    )  # no public setter in Prefect 3
    rewritten = form_schema(derived, pipeline.params_section, pipeline.model())
    deployment._parameter_openapi_schema = ParameterSchema(**rewritten)
    return deployment


def paper_deployment_flow(paper: str, workspace: str = ".") -> Callable[..., str]:
    """A flow whose parameter is the paper's params model, defaulting to the workspace's params.yaml; it runs
    the experiment in `workspace`."""
    folder = str(Path(workspace).resolve())

    def body(params: Any, name: str) -> str:
        return publish_experiment(paper, form_overrides(paper, params, folder), name, folder)

    run_paper = params_form_flow(paper, workspace, body)
    run_paper.__module__ = (
        "flows.deployments"  # where served runs import it from (module attribute run_<paper>)
    )
    return paper_flow_options(paper, f"Run {paper} as a DVC experiment with these params")(run_paper)


def paper_flow_options(paper: str, description: str) -> Callable:
    """The flow decorator of a paper's form flows: named after the paper, runs named after their experiment."""
    return flow(
        name=f"{paper}",
        description=description,
        flow_run_name=experiment_run_name,
        validate_parameters=False,  # the params are validated in the run, with errors naming `<paper>.<key>`
    )


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
