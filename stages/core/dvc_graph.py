"""Read a paper's stages, in execution order, from `dvc.yaml` through DVC's own index (never re-declared), and
ask DVC in-process whether a stage would run."""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
import os
import sys
import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx

from stages.core.errors import PipelineError

_PARAMS_PATCH = threading.RLock()  # the patch swaps a module global: one context (per thread) at a time


@contextlib.contextmanager
def params_read_once() -> Iterator[None]:
    """While open, DVC parses each local params file once (per path, size and modification time) instead of once
    for every stage that reads it: a paper's checks parsed one 57 KB `params.yaml` ten times, `lock-status` 114
    times, at ~0.1–0.2 s each. For read-only checks only (`Stage.changed()`, status): the parsed document is shared,
    and DVC selects keys from it and compares."""
    from dvc.dependency import param

    with _PARAMS_PATCH:
        load_path = param.load_path
        parsed: dict[tuple[str, int, int], Any] = {}

        def load_once(path: str, fs: Any, **kwargs: Any) -> Any:
            if getattr(fs, "protocol", None) != "local" or kwargs:
                return load_path(path, fs, **kwargs)
            stat = os.stat(path)
            key = (str(path), stat.st_mtime_ns, stat.st_size)
            if key not in parsed:
                parsed[key] = load_path(path, fs)
            return parsed[key]

        param.load_path = load_once
        try:
            yield
        finally:
            param.load_path = load_path


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
        self._read: tuple[str, str] | None = None  # digests of dvc.yaml, dvc.lock as the index read them

    def paper_stages(self, paper_id: str) -> list[str]:
        """`paper_stages(paper_id)` read from the open index (one index read serves both)."""
        return _stage_order(self._open(), paper_id, self.workspace)

    def is_current(self, name: str) -> bool:
        """True when DVC finds nothing to do for stage `name` (a stage DVC does not know is never current)."""
        return name in self.current_stages([name])

    def current_stages(self, names: Iterable[str]) -> frozenset[str]:
        """The stages of `names` DVC finds nothing to do for, checked under one lock with each params file parsed
        once."""
        from stages.core.dvc_cli import workspace_lock

        repo = self._open()
        known = [self._stages[name] for name in names if name in self._stages]
        with workspace_lock(self.workspace), repo.lock, params_read_once():
            return frozenset(stage.name for stage in known if not stage.changed())

    def plan(self, paper_id: str) -> PaperPlan:
        """The paper's stages in order and which of them DVC finds nothing to do for, now."""
        stages = self.paper_stages(paper_id)
        return PaperPlan(paper_id, stages, self.current_stages(stages), self._read or ("", ""))

    def still_reads(self, plan: PaperPlan) -> bool:
        """Whether `dvc.yaml` and `dvc.lock` are what they were when `plan` was made."""
        return self._record() == plan.record

    def _open(self) -> Any:
        if self._repo is None:
            from dvc.repo import Repo

            self._read = self._record()
            self._repo = Repo(self.workspace)
            self._stages = {stage.name: stage for stage in self._repo.index.stages}
        return self._repo

    def close(self) -> None:
        """Close the open repository (if any)."""
        if self._repo is not None:
            self._repo.close()
            self._repo, self._stages = None, {}

    def refresh(self) -> None:
        """Forget the open repository if `dvc.yaml` or `dvc.lock` changed since it was read (a run that
        rewrote them); the next check reads them again."""
        if self._repo is not None and self._record() != self._read:
            self._repo.close()
            self._repo, self._stages = None, {}

    def _record(self) -> tuple[str, str]:
        root = Path(self.workspace)
        return tuple(
            hashlib.sha256((root / name).read_bytes()).hexdigest() if (root / name).is_file() else ""
            for name in ("dvc.yaml", "dvc.lock")
        )


@dataclass(frozen=True)
class PaperPlan:
    """A paper's stages in DAG order, the ones DVC found nothing to do for, and the digests of `dvc.yaml` and
    `dvc.lock` they were read from."""

    paper_id: str
    stages: list[str]
    current: frozenset[str]
    record: tuple[str, str]


def can_fork() -> bool:
    """Whether forking this process is safe here: on Linux (Windows has no fork; macOS's system libraries are not
    fork-safe once loaded, which numpy's Accelerate is)."""
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def _plan(paper_id: str, workspace: str) -> PaperPlan:
    checker = StageChecker(workspace)
    try:
        return checker.plan(paper_id)
    finally:
        checker.close()


def plan_now(paper_id: str, workspace: str | Path) -> Future[PaperPlan]:
    """`StageChecker(workspace).plan(paper_id)` made here, at once, as a completed future."""
    done: Future[PaperPlan] = Future()
    done.set_result(_plan(paper_id, str(workspace)))
    return done


def plan_in_background(paper_id: str, workspace: str | Path) -> Future[PaperPlan]:
    """`StageChecker(workspace).plan(paper_id)` computed in a forked process, so that DVC's index read and checks
    (~2 s) run on another core while the caller imports Prefect (~2–5 s). Call it before Prefect is imported (it
    forks this process); where forking is not safe (`can_fork`) the plan is made here, at once."""
    if not can_fork():
        return plan_now(paper_id, workspace)
    executor = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork"))
    future = executor.submit(_plan, paper_id, str(workspace))
    executor.shutdown(wait=False)
    return future


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
