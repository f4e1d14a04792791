"""Read a paper's stages, in execution order, from `dvc.yaml` through DVC's own index (never re-declared), and
ask DVC in-process whether a stage would run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import networkx as nx

from stages.core.errors import PipelineError


def paper_stages(paper_id: str, workspace: str | Path = ".") -> list[str]:
    """The stages named `<paper_id>-*` plus every stage they depend on, upstream first."""
    from dvc.repo import Repo

    with Repo(str(workspace)) as repo:
        return _stage_order(repo, paper_id, workspace)


def _stage_order(repo: Any, paper_id: str, workspace: str | Path) -> list[str]:
    graph = repo.index.graph  # edges point from a stage to the stages it depends on
    by_name = {stage.name: stage for stage in graph.nodes}
    own = [name for name in by_name if name.startswith(f"{paper_id}-")]
    if not own:
        raise PipelineError(f"dvc.yaml in {workspace} has no stages named '{paper_id}-*'")
    needed = set(own)
    for name in own:
        needed |= {stage.name for stage in nx.descendants(graph, by_name[name])}
    order = [stage.name for stage in reversed(list(nx.topological_sort(graph)))]
    return [name for name in order if name in needed]


class StageChecker:
    """Whether `dvc repro --single-item <stage>` would do anything, by DVC's own test (`Stage.changed()`: deps,
    outs, command, params and always-changed stages), from one repository opened in this process: a check costs
    tens of milliseconds where a `dvc repro` process costs seconds. Call `refresh()` after a run: the open index
    is dropped if the run rewrote `dvc.lock`."""

    def __init__(self, workspace: str | Path) -> None:
        self.workspace = str(workspace)
        self._repo: Any = None
        self._stages: dict[str, Any] = {}
        self._read: tuple[bytes, bytes] | None = None  # dvc.yaml and dvc.lock as the open index read them

    def paper_stages(self, paper_id: str) -> list[str]:
        """`paper_stages(paper_id)` read from the open index (one index read serves both)."""
        return _stage_order(self._open(), paper_id, self.workspace)

    def is_current(self, name: str) -> bool:
        """True when DVC finds nothing to do for stage `name` (a stage DVC does not know is never current)."""
        from stages.core.dvc_cli import workspace_lock

        repo = self._open()
        stage = self._stages.get(name)
        if stage is None:
            return False
        with workspace_lock(self.workspace), repo.lock:
            return not stage.changed()

    def _open(self) -> Any:
        if self._repo is None:
            from dvc.repo import Repo

            self._read = self._record()
            self._repo = Repo(self.workspace)
            self._stages = {stage.name: stage for stage in self._repo.index.stages}
        return self._repo

    def refresh(self) -> None:
        """Forget the open repository if `dvc.yaml` or `dvc.lock` changed since it was read (a run that
        rewrote them); the next check reads them again."""
        if self._repo is not None and self._record() != self._read:
            self._repo.close()
            self._repo, self._stages = None, {}

    def _record(self) -> tuple[bytes, bytes]:
        root = Path(self.workspace)
        return tuple(
            (root / name).read_bytes() if (root / name).is_file() else b""
            for name in ("dvc.yaml", "dvc.lock")
        )


def locked_paper_stages(lock: dict[str, Any], paper_id: str) -> list[str]:
    """The `<paper_id>-*` stages of a `dvc.lock` and every stage whose outputs they consumed, upstream first.

    Read from the lock itself, so an experiment that changed a templated dep (say `dataset`) is traced through
    the stages that actually ran for it, not through the workspace's current DAG.
    """
    producer = {out["path"]: name for name, entry in lock.items() for out in entry.get("outs", [])}
    needed: list[str] = []
    pending = [name for name in lock if name.startswith(f"{paper_id}-")]
    while pending:
        name = pending.pop()
        if name in needed:
            continue
        needed.append(name)
        for dep in lock[name].get("deps", []):
            upstream = producer.get(dep["path"]) or _producer_of_file(dep["path"], producer)
            if upstream and upstream not in needed:
                pending.append(upstream)
    return [name for name in lock if name in needed]


def _producer_of_file(path: str, producer: dict[str, str]) -> str | None:
    """The stage whose output folder holds `path` (a dep may point inside a directory output)."""
    for out, name in producer.items():
        if path.startswith(out.rstrip("/") + "/"):
            return name
    return None
