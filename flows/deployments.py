"""Deployable flows, one per paper, as module attributes (`run_<paper>`) so a served run can import them.

Each takes the paper's typed params model (defaults: the workspace's params.yaml at `$ICML25_WORKSPACE`, else
the current folder), which the Prefect UI shows as a form. The workspace is fixed when the deployments are
served: no parameter of any deployment names a folder, so a run triggered through the API cannot point DVC at
another folder's `dvc.yaml`.
"""

import os
from pathlib import Path

from prefect import flow

from flows.experiment_flow import paper_deployment_flow, run_all_papers
from stages.core.params import PARAMS_FILE
from stages.papers.registry import PAPERS

WORKSPACE = os.environ.get("ICML25_WORKSPACE", ".")

PAPER_FLOWS = (
    {paper: paper_deployment_flow(paper, WORKSPACE) for paper in PAPERS.names()}
    if (Path(WORKSPACE) / PARAMS_FILE).is_file()
    else {}
)
for _paper, _flow in PAPER_FLOWS.items():
    globals()[f"run_{_paper}"] = _flow


@flow(name="all-papers")
def run_all_papers_served(papers: list[str] | None = None, sweep: list[list[str]] | None = None) -> list[str]:
    """Every registered paper (or one paper per override set of `sweep`) as DVC experiments on Dask, in the
    served workspace."""
    return run_all_papers(papers, sweep, WORKSPACE)
