"""Read a paper's stages, in execution order, from `dvc.yaml` through DVC's own index (never re-declared)."""

from __future__ import annotations

from pathlib import Path

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
