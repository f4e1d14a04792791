"""Read a paper's stages, in execution order, from `dvc.yaml` through DVC's own index (never re-declared)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import networkx as nx

from stages.core.errors import PipelineError


def paper_stages(paper_id: str, workspace: str | Path = ".") -> list[str]:
    """The stages named `<paper_id>-*` plus every stage they depend on, upstream first."""
    from dvc.repo import Repo

    with Repo(str(workspace)) as repo:
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
