"""Every pipeline of the project (dataset stages, the reusable core-set stage, each paper, the report), and
running one DVC stage: `icml25 stage <name>` is the command each `dvc.yaml` stage calls."""

from __future__ import annotations

import sys
from pathlib import Path

from stages.common import CommonParams
from stages.core.errors import PipelineError
from stages.core.io import OutputTransaction
from stages.core.params import PARAMS_FILE, read_params_file, validate_section
from stages.core.seeding import seed_everything
from stages.core.steps import Pipeline, Step, StepContext, resolve_template


def all_pipelines() -> list[Pipeline]:
    """Dataset stages, the generic core-set stage, every registered paper, then the report."""
    from stages import report
    from stages.datasets.pipeline import PIPELINE as DATA
    from stages.methods.selection.pipeline import PIPELINE as CORESET
    from stages.papers.registry import PAPERS

    return [DATA, CORESET, *(PAPERS.get(paper_id).pipeline for paper_id in PAPERS.names()), report.PIPELINE]


def find_stage(stage_name: str) -> tuple[Pipeline, Step]:
    """The pipeline and step behind a DVC stage name such as `mrmc-trace` or `data-digits`."""
    for pipeline in all_pipelines():
        for step in pipeline.steps:
            if pipeline.stage_name(step) == stage_name:
                return pipeline, step
    names = [pipeline.stage_name(step) for pipeline in all_pipelines() for step in pipeline.steps]
    raise PipelineError(f"unknown stage '{stage_name}'; stages: {', '.join(names)}")


def run_stage(stage_name: str, params_path: str | Path = PARAMS_FILE, root: str | Path = ".") -> None:
    """Validate params, check inputs exist, run the step and move its outputs into place atomically."""
    pipeline, step = find_stage(stage_name)
    raw = read_params_file(params_path)
    common = validate_section(CommonParams, raw.get("common"), "common", str(params_path))
    if pipeline.params_section not in raw:
        raise PipelineError(f"{params_path}: missing section '{pipeline.params_section}'")
    params = validate_section(
        pipeline.params_model, raw[pipeline.params_section], pipeline.params_section, str(params_path)
    )
    root = Path(root)
    inputs = {role: root / resolve_template(path, raw) for role, path in step.deps.items()}
    missing = [f"{role}: {path}" for role, path in inputs.items() if not path.exists()]
    if missing:
        raise PipelineError(
            f"stage '{stage_name}': inputs not found ({'; '.join(missing)}); run the stages "
            "that produce them first (`dvc repro` does)"
        )
    outputs = {role: root / resolve_template(path, raw) for role, path in step.all_outputs().items()}
    seed_everything(common.seed)  # steps derive their own seeds; this pins any library-level randomness too
    with OutputTransaction(root) as transaction:
        context = StepContext(
            stage=stage_name,
            params=params,
            common=common,
            inputs=inputs,
            outputs=transaction,
            output_paths=outputs,
        )
        step.run(context)
        unwritten = [role for role, path in outputs.items() if path not in transaction.requested]
        if unwritten:
            raise PipelineError(
                f"stage '{stage_name}' did not write its declared outputs: {', '.join(unwritten)}"
            )
    print(f"[{stage_name}] done", file=sys.stderr)
