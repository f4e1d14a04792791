"""`icml25 lock-status`: is `dvc.lock` the record of the code and params in this workspace?

For every stage of `dvc.yaml` it compares what `dvc.lock` recorded with the workspace, through DVC's own
dependency objects (so hashing and params semantics are DVC's):

- **never locked**: the stage has no lock entry;
- **stale**: its command changed, a code dep (a file git tracks) or a params key it reads differs from the
  recorded one, its deps or outs are not the recorded set, or a data dep that is present differs;
- data deps that are absent (a fresh clone, before `dvc pull` / `dvc repro`) are not checked and are counted,
  so the command needs no data and runs in CI.

A stage downstream of a stale one is listed too (its inputs will change when the stale one reruns), except
downstream of the `params` gate: its one output is constant, so rerunning it changes nothing below it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from stages.core.dvc_cli import OFFLINE_ENV
from stages.core.dvc_graph import params_read_once
from stages.core.git import git_output
from stages.platform.dvc_yaml import GATE_STAGE


@dataclass
class StageStatus:
    """Why one stage's lock entry is not the workspace's record (empty `reasons`: fresh)."""

    name: str
    reasons: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)
    upstream: list[str] = field(default_factory=list)

    @property
    def fresh(self) -> bool:
        """No own difference and no stale stage upstream."""
        return not self.reasons and not self.upstream


def tracked_files(root: Path) -> set[str]:
    """Paths git tracks in the workspace (the code deps; everything else is data)."""
    return {path for path in git_output(root, "ls-files", "-z").split("\0") if path}


def _params_reasons(dep) -> list[str]:
    """`params.yaml: mrmc.pool_size changed` for each key that differs from the lock (or is new / deleted)."""
    changes = dep.workspace_status().get(dep.def_path, {})
    return [f"{dep.def_path}: {key} {state}" for key, state in sorted(changes.items())]


def _locked_paths(lock_entry: dict, kind: str) -> set[str]:
    return {item["path"] for item in lock_entry.get(kind, [])}


def stage_status(stage, lock_entry: dict | None, tracked: set[str], root: Path) -> StageStatus:
    """The own status of one DVC stage against its lock entry."""
    status = StageStatus(stage.name)
    if lock_entry is None:
        status.reasons.append("never locked")
        return status
    if lock_entry.get("cmd") != stage.cmd:
        status.reasons.append(f"command changed: {lock_entry.get('cmd')!r} → {stage.cmd!r}")
    file_deps = [dep for dep in stage.deps if type(dep).__name__ != "ParamsDependency"]
    declared = {str(dep.def_path) for dep in file_deps}
    for kind, paths in (("deps", declared), ("outs", {str(out.def_path) for out in stage.outs})):
        recorded = _locked_paths(lock_entry, kind)  # the lock keeps params keys apart, under `params`
        if recorded != paths:
            added, removed = sorted(paths - recorded), sorted(recorded - paths)
            status.reasons.append(f"{kind} set changed (+{added} −{removed})")
    for dep in stage.deps:
        if type(dep).__name__ == "ParamsDependency":
            status.reasons += _params_reasons(dep)
            continue
        path = str(dep.def_path)
        if path not in tracked and not (root / path).exists():
            status.unchecked.append(path)
            continue
        state = dep.status().get(path)
        if state:
            status.reasons.append(f"{'code' if path in tracked else 'data'} dep {path} {state}")
    return status


def _read_lock(root: Path) -> dict[str, dict]:
    from dvc.utils.serialize import load_yaml

    lock = root / "dvc.lock"
    return load_yaml(lock).get("stages", {}) if lock.is_file() else {}


def lock_status(root: str | Path = ".") -> list[StageStatus]:
    """The status of every stage of `dvc.yaml`, in the graph's order, downstream staleness propagated."""
    import networkx as nx
    from dvc.repo import Repo

    root = Path(root).resolve()
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
    tracked = tracked_files(root)
    locked = _read_lock(root)
    with Repo(str(root)) as repo, params_read_once():
        graph = repo.index.graph
        stages = {stage.name: stage for stage in repo.index.stages}
        statuses = {
            name: stage_status(stage, locked.get(name), tracked, root) for name, stage in stages.items()
        }
        for name, stage in stages.items():  # DVC's graph has edges from a stage to the stages it depends on
            upstream = {node.name for node in nx.descendants(graph, stage)} - {name}
            statuses[name].upstream = sorted(
                other for other in upstream - {GATE_STAGE} if other in statuses and statuses[other].reasons
            )
    return list(statuses.values())


def status_text(statuses: list[StageStatus], verbose: bool = False) -> str:
    """A report: the stale and never-locked stages with their reasons, then the counts."""
    stale = [status for status in statuses if not status.fresh]
    lines = []
    for status in stale:
        if status.reasons:
            shown = status.reasons if verbose else status.reasons[:3]
            more = len(status.reasons) - len(shown)
            lines.append(f"{status.name}: " + "; ".join(shown) + (f"; and {more} more" if more else ""))
        else:
            lines.append(f"{status.name}: downstream of stale {', '.join(status.upstream)}")
    unchecked = sorted({path for status in statuses for path in status.unchecked})
    summary = (
        f"{len(statuses) - len(stale)} of {len(statuses)} stages fresh in dvc.lock, {len(stale)} stale "
        f"({sum(bool(s.reasons) for s in stale)} by their own code, params or data, the rest downstream)"
    )
    if unchecked:
        summary += f"; {len(unchecked)} data deps absent here, not checked"
    return "\n".join([*lines, summary])
