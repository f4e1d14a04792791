"""Every pipeline of the project (dataset stages, the reusable core-set stage, each paper, the report), and
running one DVC stage: `icml25 stage <name>` is the command each `dvc.yaml` stage calls."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from stages.core.errors import PipelineError
from stages.core.execution import execute
from stages.core.ownership import sole_writer
from stages.core.params import PARAMS_FILE, read_params_file, validate_section
from stages.core.steps import Pipeline, Step, import_ref, resolve_template

CHECKED_PATH = "data/params.checked"
"""The `params` stage's one output: every stage that reads no other stage's output depends on it."""
REPORT_PATH = "reports/claims.md"
TIMING_REPORT_PATH = "reports/timings/claims.md"


def report_pipeline() -> Pipeline:
    """The `report` stage (every paper's `claims.json` → `reports/claims.md`, byte-identical on rerun) and the
    `report-timings` benchmark stage (the claims about wall-clock time → `reports/timings/claims.md`)."""
    from stages.papers.registry import PAPERS

    papers = [PAPERS.get(paper_id) for paper_id in PAPERS.names()]
    report = Step(
        name="report",
        deps={paper.id: paper.claims_path for paper in papers},
        outs={"report": REPORT_PATH},
        description="gather all papers' claims into reports/claims.md",
    )
    timings = Step(
        name="report-timings",
        deps={paper.id: paper.timing_claims_path for paper in papers if paper.timing_claims_path},
        outs={"report": TIMING_REPORT_PATH},
        run="stages.platform.report:run_timings",
        description="benchmark stage (timings/ only): gather the papers' claims about wall-clock time into "
        "reports/timings/claims.md",
    )
    return Pipeline(
        id="",
        package="stages.platform",
        params_section="common",
        params_model="stages.common:CommonParams",
        steps=(report, timings),
    )


def params_model_modules() -> tuple[str, ...]:
    """The module of every params model the check validates (found through the registry at run time, so
    the import closure would miss them): a stricter model reruns the check."""
    from stages.datasets.pipeline import data_pipeline
    from stages.methods.selection.pipeline import PIPELINE as CORESET
    from stages.papers.registry import PAPERS

    pipelines = [data_pipeline({}), CORESET, *(PAPERS.get(paper_id).pipeline for paper_id in PAPERS.names())]
    return tuple(dict.fromkeys(pipeline.params_model.partition(":")[0] for pipeline in pipelines))


def params_pipeline() -> Pipeline:
    """The `params` stage: the whole params file checked before any stage can delete an output."""
    step = Step(
        name="params",
        deps={"params": PARAMS_FILE},
        outs={"checked": CHECKED_PATH},
        run="stages.platform.params_check:run",
        description="check every params section, section name and user-supplied input before any stage runs",
        modules=params_model_modules(),
    )
    return Pipeline(
        id="",
        package="stages.platform",
        params_section="common",
        params_model="stages.common:CommonParams",
        steps=(step,),
    )


def all_pipelines(raw_params: Mapping[str, Any] | None = None) -> list[Pipeline]:
    """The params check, dataset stages (those in use under `raw_params`), the core-set stage, every paper,
    then the report."""
    from stages.datasets.pipeline import data_pipeline
    from stages.methods.selection.pipeline import PIPELINE as CORESET
    from stages.papers.registry import PAPERS

    raw = read_params_file(PARAMS_FILE) if raw_params is None else raw_params
    papers = [PAPERS.get(paper_id).pipeline for paper_id in PAPERS.names()]
    return [params_pipeline(), data_pipeline(raw), CORESET, *papers, report_pipeline()]


def _own_paper_pipelines(stage_name: str) -> list[Pipeline]:
    """The pipelines of the registered papers whose id prefixes `stage_name` (importing only those)."""
    from stages.papers.registry import PAPER_SPECS, load_paper, paper_id_of

    ids = (paper_id_of(spec) for spec in PAPER_SPECS)
    return [load_paper(paper_id).pipeline for paper_id in ids if stage_name.startswith(paper_id + "-")]


def _step_named(stage_name: str, pipelines: list[Pipeline]) -> tuple[Pipeline, Step] | None:
    for pipeline in pipelines:
        for step in pipeline.steps:
            if pipeline.stage_name(step) == stage_name:
                return pipeline, step
    return None


def find_stage(stage_name: str, raw_params: Mapping[str, Any]) -> tuple[Pipeline, Step]:
    """The pipeline and step behind a DVC stage name such as `mrmc-trace` or `data-digits` (a paper's stage
    imports that paper alone: a stage process pays for no other paper's modules)."""
    found = _step_named(stage_name, _own_paper_pipelines(stage_name))
    if found:
        return found
    pipelines = all_pipelines(raw_params)
    found = _step_named(stage_name, pipelines)
    if found:
        return found
    names = [name for pipeline in pipelines for name in pipeline.stage_names()]
    raise PipelineError(f"unknown stage '{stage_name}'; stages: {', '.join(names)}")


def check_declared_deps(stage_name: str, deps: Mapping[str, str], root: Path) -> None:
    """Params-dependent deps must be in the stage's `dvc.yaml` entry, or DVC would not track them."""
    dvc_yaml = root / "dvc.yaml"
    declared = set(yaml.safe_load(dvc_yaml.read_text())["stages"].get(stage_name, {}).get("deps", []))
    missing = sorted(set(deps.values()) - declared)
    if missing:
        raise PipelineError(
            f"stage '{stage_name}': params.yaml now asks for {', '.join(missing)}, which {dvc_yaml} does not "
            "declare as deps; run `icml25 dvc-yaml` to regenerate it, then `dvc repro`"
        )


def run_stage(stage_name: str, params_path: str | Path = PARAMS_FILE, root: str | Path = ".") -> None:
    """Validate params, check inputs exist, then, as the stage's only writer, run the step and move its
    outputs into place atomically."""
    from stages.common import CommonParams

    root = Path(root)
    raw = read_params_file(params_path)
    pipeline, step = find_stage(stage_name, raw)
    common = validate_section(CommonParams, raw.get("common"), "common", str(params_path))
    if pipeline.params_section not in raw:
        raise PipelineError(f"{params_path}: missing section '{pipeline.params_section}'")
    params = validate_section(
        pipeline.model(), raw[pipeline.params_section], pipeline.params_section, str(params_path)
    )
    deps = step.data_deps(raw)
    if step.dynamic_deps and (root / "dvc.yaml").is_file():
        check_declared_deps(
            stage_name, {role: resolve_template(path, raw) for role, path in deps.items()}, root
        )
    inputs = {role: root / resolve_template(path, raw) for role, path in deps.items()}
    missing = [f"{role}: {path}" for role, path in inputs.items() if not path.exists()]
    if missing:
        raise PipelineError(
            f"stage '{stage_name}': inputs not found ({'; '.join(missing)}); run the stages "
            "that produce them first (`dvc repro` does)"
        )
    outputs = {role: root / resolve_template(path, raw) for role, path in step.all_outputs().items()}
    function = import_ref(pipeline.run_ref(step))
    with sole_writer(stage_name, root):  # one writer per stage; dies with the `dvc` that launched it
        execute(stage_name, function, step.args, params, common, inputs, outputs, root)
