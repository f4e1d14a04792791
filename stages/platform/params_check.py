"""The `params` stage: all of params.yaml validated before DVC deletes a single output.

DVC removes a stage's outputs before it runs the stage's command, so a stage that validates its own params
fails only after its earlier outputs are gone. This stage runs first instead: it depends on the whole
`params.yaml` file (any edit, a typo key or an unknown section included, reruns it) and every stage that reads
no other stage's output depends on it, so in `dvc repro` and `dvc exp run` it precedes every stage. It checks
every section against its params model, section names against the registry, and every user-supplied input
(a dep no stage produces) for existence and for being what its stage reads: each source's `check` and each
paper's `input_check` name a folder given for a file, a file that is not Parquet, a missing column or file.
Its one output never changes, so a valid edit reruns nothing beyond the stages that read the edited keys.
(A missing dep does not stop DVC either: it deletes the stage's outputs, then fails.)
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from stages.core.context import StepContext
from stages.core.errors import PipelineError
from stages.core.params import PARAMS_FILE, read_params_file, validate_section
from stages.core.steps import resolve_template
from stages.platform.pipelines import CHECKED_PATH, all_pipelines

CHECKED_TEXT = "params.yaml: every section passed its params model; every user-supplied input is readable\n"


def section_models() -> dict[str, Any]:
    """Every params section the project knows, with its model."""
    models: dict[str, Any] = {}
    for pipeline in all_pipelines({}):
        models.setdefault(pipeline.params_section, pipeline.model())
    return models


def section_problems(raw: Mapping[str, Any], params_path: str) -> list[str]:
    """Unknown or missing sections, and each section's validation error (key named)."""
    models = section_models()
    problems = [
        f"{params_path}: unknown section '{name}'; sections: {', '.join(models)}"
        for name in raw
        if name not in models
    ]
    for name, model in models.items():
        if name not in raw and name != "common":
            problems.append(f"{params_path}: missing section '{name}'")
            continue
        try:
            validate_section(model, raw.get(name), name, params_path)
        except PipelineError as error:
            problems.append(str(error))
    return problems


def user_inputs(raw: Mapping[str, Any]) -> list[str]:
    """Deps of any stage that no stage produces and that are not project code: the user's files."""
    steps = [step for pipeline in all_pipelines(raw) for step in pipeline.steps]
    produced = {resolve_template(path, raw) for step in steps for path in step.all_outputs().values()}
    wanted = {resolve_template(path, raw) for step in steps for path in step.data_deps(raw).values()}
    return sorted(wanted - produced - {CHECKED_PATH})


def input_problems(supplied: Iterable[str], root: Path) -> list[str]:
    """A user-supplied input (`user_inputs`) that is missing, or a Parquet file that cannot be read."""
    import pyarrow.parquet as pq

    problems = []
    for relative in supplied:
        path = root / relative
        if not path.exists():
            problems.append(f"{relative}: not found (named in {PARAMS_FILE})")
        elif path.is_file() and path.suffix == ".parquet":
            try:
                pq.read_schema(path)
            except Exception as error:  # pyarrow raises several types for a bad file
                problems.append(f"{relative}: not a readable Parquet file ({error})")
    return problems


def kind_problems(raw: Mapping[str, Any], root: Path, supplied: Collection[str]) -> list[str]:
    """What each source's and paper's own check finds wrong with the user's files: a folder where a file is
    due, a file that is not Parquet, a missing column or IDX file (`Source.check`, `Paper.input_check`).
    A check runs when its stage reads a user-supplied input (one of `supplied`: a path no stage produces)."""
    from stages.common import CommonParams
    from stages.core.steps import import_ref
    from stages.datasets.pipeline import configured, source_step
    from stages.datasets.registry import get_source, source_names
    from stages.papers.registry import PAPERS

    def reads_user_input(steps) -> bool:
        return any(
            resolve_template(path, raw) in supplied for step in steps for path in step.data_deps(raw).values()
        )

    common = validate_section(CommonParams, raw.get("common"), "common")
    problems: list[str] = []
    with _inside(root):  # the params' relative paths are the workspace's
        for name in source_names():
            source, params = get_source(name), getattr(common.datasets, name)
            if source.check and configured(name, raw) and reads_user_input([source_step(name)]):
                problems += source.check(params)
        for paper_id in PAPERS.names():
            paper = PAPERS.get(paper_id)
            if paper.input_check and reads_user_input(paper.pipeline.steps):
                params = validate_section(paper.pipeline.model(), raw.get(paper_id), paper_id)
                problems += import_ref(paper.input_check)(params)
    return problems


@contextmanager
def _inside(folder: Path) -> Iterator[None]:
    previous = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(previous)


def check_params(params_path: str | Path = PARAMS_FILE, root: str | Path = ".") -> None:
    """Raise one PipelineError listing every problem with the params file and the inputs it names."""
    raw = read_params_file(params_path)
    problems = section_problems(raw, str(params_path))
    if not problems:
        supplied = user_inputs(raw)  # every pipeline's deps resolved: done once
        problems = kind_problems(raw, Path(root), set(supplied))
        named = " ".join(problems)  # a kind check's message about a path replaces the generic one
        problems += [
            problem for problem in input_problems(supplied, Path(root)) if problem.split(":")[0] not in named
        ]
    if problems:
        raise PipelineError("\n".join(problems))


def run(ctx: StepContext) -> None:
    """The `params` stage: check everything, then write the (constant) marker every root stage reads."""
    params_path = ctx.input("params")
    check_params(params_path, params_path.parent)
    ctx.output("checked").write_text(CHECKED_TEXT)
