"""A Prefect flow per paper: one task per DVC stage, in DAG order, each run through `dvc repro`.

`icml25 flow <paper>` runs it without a server: Prefect's API app runs in a process forked at the start
(`flows.embedded_api`), or the run reports to `PREFECT_API_URL` when that is set. The flow asks DVC, in-process,
whether each stage would run (`StageChecker`: DVC's own `Stage.changed()`); a stage with nothing to do is logged
as skipped by its task, and one that would run goes through `dvc repro --single-item <stage>`, which writes
`dvc.lock` (a workspace lock makes DVC writes take turns). So a flow with nothing to do costs one DVC index
read, not one `dvc` process per stage. `icml25 flow` makes that read while the forked API process comes up, or
with a running server in a forked process while this one imports Prefect (`plan_in_background`); the plan holds
while nothing has run and `dvc.yaml`/`dvc.lock` read as they did, after which every stage is checked just before
its task. The flow ends by
publishing Markdown artifacts with metrics, claims and the audit.
"""

from __future__ import annotations

import json
from concurrent.futures import Future
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact

from flows.embedded_api import ForkedApi, embedded_api
from stages.core.dvc_cli import run_dvc
from stages.core.dvc_graph import PaperPlan, StageChecker, plan_now
from stages.platform.audit import audit_markdown, audit_record

LOG_TAIL_LINES = 40
# plans made by `run_paper_flow`'s caller before Prefect started, by paper and workspace
_PLANS: dict[tuple[str, str], Future[PaperPlan]] = {}


@task(name="dvc-stage", retries=0)
def run_dvc_stage(stage: str, workspace: str, force: bool = False, current: bool = False) -> str:
    """Reproduce one stage through DVC and log its output; a failing stage fails the task with its message.
    `current`: DVC found nothing to do for it (checked by the flow just before), so no `dvc` process runs."""
    logger = get_run_logger()
    if current and not force:
        logger.info("Stage '%s' didn't change, skipping (DVC's status, checked in-process)", stage)
        return stage
    logger.info("dvc repro %s", stage)
    args = ["repro", "--single-item", stage, *(["--force"] if force else [])]
    completed = run_dvc(args, workspace, capture=True)
    lines = [
        line
        for line in (completed.stdout + completed.stderr).splitlines()
        if line.strip() and "it/s" not in line
    ]
    for line in lines[-LOG_TAIL_LINES:]:
        logger.info("%s | %s", stage, line)
    return stage


def results_markdown(paper_id: str, workspace: Path) -> str:
    """Metrics and claims of a paper as Markdown (for the Prefect artifact)."""
    from stages.core.claims import read_claims
    from stages.papers.registry import load_paper
    from stages.platform.report import TIMING_NOTE, claims_table

    paper = load_paper(paper_id)
    parts = [f"# {paper.title}", ""]
    for step in paper.pipeline.steps:
        for metrics_path in step.metrics.values():
            path = workspace / metrics_path
            if path.is_file():
                parts += [
                    f"## Metrics (`{metrics_path}`)",
                    "",
                    "```json",
                    json.dumps(json.loads(path.read_text()), indent=2),
                    "```",
                    "",
                ]
    claims_path = workspace / paper.claims_path
    if claims_path.is_file():
        parts.append(claims_table({paper_id: read_claims(claims_path)}))
    timing_path = workspace / paper.timing_claims_path if paper.timing_claims_path else None
    if timing_path is not None and timing_path.is_file():
        source = f"From `{paper.timing_claims_path}` (the benchmark step `{paper_id}-timing`). {TIMING_NOTE}"
        parts.append(
            claims_table({paper_id: read_claims(timing_path)}, "Claims about wall-clock time", source)
        )
    return "\n".join(parts)


@flow(name="paper-pipeline", log_prints=True)
def paper_flow(paper: str, workspace: str = ".", force: bool = False) -> list[str]:
    """Run every stage of `paper` (and the stages it depends on) through DVC, then publish results."""
    checker = StageChecker(workspace)
    try:
        finished = _run_stages(paper, workspace, force, checker)
    finally:
        checker.close()
    create_markdown_artifact(
        key=f"{paper.replace('_', '-')}-results",
        markdown=results_markdown(paper, Path(workspace)),
        description=f"metrics and claims of {paper}",
    )
    create_markdown_artifact(
        key=f"{paper.replace('_', '-')}-audit",
        markdown=audit_markdown(audit_record(paper, "workspace", workspace)),
        description=f"audit of {paper} in the workspace",
    )
    return finished


def _run_stages(paper: str, workspace: str, force: bool, checker: StageChecker) -> list[str]:
    """One task per stage in DAG order; a stage is skipped when the plan (or, once anything ran or `dvc.lock`
    changed since the plan, DVC asked again) finds nothing to do for it."""
    plan = None if force else _planned(paper, workspace, checker)
    stages = plan.stages if plan is not None else checker.paper_stages(paper)
    get_run_logger().info("stages in order: %s", ", ".join(stages))
    finished, ran = [], False
    for stage in stages:
        if plan is None:  # --force: every stage runs
            current = False
        elif ran or not checker.still_reads(plan):  # a run here or elsewhere rewrote dvc.lock: ask DVC again
            checker.refresh()
            current = checker.is_current(stage)
        else:
            current = stage in plan.current
        finished.append(run_dvc_stage.with_options(name=stage)(stage, workspace, force, current))
        ran = ran or not current
    return finished


def _planned(paper: str, workspace: str, checker: StageChecker) -> PaperPlan:
    """The plan made before Prefect started, if there is one and `dvc.yaml`/`dvc.lock` still read the same; else
    one made now."""
    pending = _PLANS.pop((paper, workspace), None)
    if pending is not None:
        try:
            plan = pending.result()
        except Exception as error:  # the forked planner died (say, killed): plan here instead
            get_run_logger().warning(
                "the plan made before Prefect started failed (%s); planning again", error
            )
        else:
            if checker.still_reads(plan):
                return plan
    return checker.plan(paper)


def run_paper_flow(
    paper: str,
    workspace: str = ".",
    force: bool = False,
    plan: Future[PaperPlan] | None = None,
    api: ForkedApi | None = None,
) -> list[str]:
    """Validate the paper id and run its flow: against PREFECT_API_URL when set, else against Prefect's server app
    (`flows.embedded_api`): `api` when given, else one in a thread of this process. `api` and `plan` are started
    before Prefect is imported (`flows.embedded_api.start_embedded_api`, `stages.core.dvc_graph.plan_in_background`)
    so that they run on the other core meanwhile; with `api` and no `plan`, the plan is made here while the API
    comes up."""
    from stages.papers.registry import load_paper

    workspace = str(Path(workspace).resolve())
    try:
        load_paper(paper)
        if plan is None and api is not None and not force:
            # this process would only wait for the forked API: ask DVC meanwhile
            plan = plan_now(paper, workspace)
    except BaseException:
        if api is not None:
            api.stop()
        raise
    if plan is not None:
        _PLANS[(paper, workspace)] = plan
    try:
        with embedded_api(api):
            return paper_flow(paper=paper, workspace=workspace, force=force)
    finally:
        _PLANS.pop((paper, workspace), None)
