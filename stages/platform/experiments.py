"""Runs with param overrides as DVC experiments: validated first, then `dvc exp run --temp` in an isolated
copy, so the main workspace and its `dvc.lock` stay untouched and each run shows in `dvc exp show`."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stages.common import CommonParams
from stages.core.dvc_cli import run_dvc
from stages.core.errors import ParamsError, PipelineError
from stages.core.git import git_output
from stages.core.params import (
    PARAMS_FILE,
    apply_overrides,
    parse_override,
    read_params_file,
    validate_section,
)

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def validate_overrides(paper: str, overrides: Sequence[str], workspace: str | Path = ".") -> dict[str, Any]:
    """Apply `key=value` overrides to the workspace's params and validate them; raise naming the bad key.

    Only the paper's own section and `common` may be overridden from a paper run.
    """
    from stages.papers.registry import PAPERS

    pipeline = PAPERS.get(paper).pipeline
    for text in overrides:
        section = parse_override(text)[0][0]
        if section not in (pipeline.params_section, "common"):
            raise ParamsError(
                f"override '{text}': a run of '{paper}' may only change '{paper}.*' or 'common.*'"
            )
    params = apply_overrides(read_params_file(Path(workspace) / PARAMS_FILE), list(overrides))
    validate_section(CommonParams, params.get("common"), "common", "overrides")
    validate_section(
        pipeline.model(), params.get(pipeline.params_section), pipeline.params_section, "overrides"
    )
    return params


@dataclass(frozen=True)
class ExperimentRun:
    """A finished experiment: its name and git revision."""

    name: str
    rev: str


def run_experiment(
    paper: str,
    overrides: Sequence[str] = (),
    name: str | None = None,
    workspace: str | Path = ".",
    on_line: Callable[[str], None] | None = None,
) -> ExperimentRun:
    """Validate the overrides, then run the paper's pipeline as a temporary DVC experiment (`on_line` gets
    DVC's output line by line as it runs)."""
    if name is not None and not _NAME.match(name):
        raise ParamsError(f"experiment name '{name}': use letters, digits, '.', '_' or '-'")
    validate_overrides(paper, overrides, workspace)
    args = ["exp", "run", "--temp", f"{paper}-claims"]
    args += [item for text in overrides for item in ("-S", text)]
    if name:
        args += ["-n", name]
    completed = run_dvc(args, workspace, capture=True, lock=False, on_line=on_line)
    found = re.search(r"Ran experiment\(s\): (\S+)", completed.stdout + completed.stderr)
    if not found:
        raise PipelineError(
            f"dvc exp run finished without naming the experiment:\n{completed.stdout[-2000:]}"
        )
    exp_name = found.group(1)
    return ExperimentRun(name=exp_name, rev=experiment_revs(workspace)[exp_name])


def experiment_revs(workspace: str | Path = ".") -> dict[str, str]:
    """Experiment name → git revision, for every experiment DVC knows in this workspace (on any baseline commit).

    Read from the git refs DVC keeps for experiments (`refs/exps/<baseline>/<name>`, what `dvc exp push` sends),
    not from `dvc exp show`, which collects every commit's metrics first (tens of seconds on a big workspace).
    """
    from dvc.repo.experiments.refs import EXPS_NAMESPACE, ITER_SKIP_NAMESPACES, ExpRefInfo

    listed = git_output(workspace, "for-each-ref", "--format=%(refname) %(objectname)", EXPS_NAMESPACE)
    revs: dict[str, str] = {}
    for line in listed.splitlines():
        ref, rev = line.split(" ", 1)
        if ref.count("/") != 4 or any(ref.startswith(f"{skip}/") for skip in ITER_SKIP_NAMESPACES):
            continue  # stash, queue, exec and temp refs are DVC's bookkeeping, not experiments
        revs[ExpRefInfo.from_ref(ref).name] = rev
    return revs
