"""Deployable flows, one per paper, as module attributes (`run_<paper>`) so a served run can import them.

Each takes the paper's typed params model (defaults: the workspace's params.yaml at `$ICML25_WORKSPACE`, else
the current folder), which the Prefect UI shows as a form.
"""

import os
from pathlib import Path

from flows.experiment_flow import paper_deployment_flow
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
