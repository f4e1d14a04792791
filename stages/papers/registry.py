"""The registered papers, one line each. A paper is held to the shared contract (tests/papers) by being here.

`PAPERS` imports every paper's pipeline on first use; `paper_spec` finds one paper's module without that, so a
stage process imports its own paper only.
"""

from __future__ import annotations

import importlib
from functools import cache

from stages.core.registry import Registry
from stages.papers.paper import Paper

PAPER_SPECS = (
    "stages.papers.mrmc.pipeline",
    "stages.papers.info_coevolution.pipeline",
    "stages.papers.dynamic_selection.pipeline",
    "stages.papers.rings.pipeline",
    "stages.papers.blae.pipeline",
    "stages.papers.fdiv_losses.pipeline",
    "stages.papers.sharpening.pipeline",
    "stages.papers.tabsds.pipeline",
    "stages.papers.kindel.pipeline",
    "stages.papers.a2i.pipeline",
    "stages.papers.gbrl.pipeline",
    "stages.papers.activation_comm.pipeline",
    "stages.papers.sfbd.pipeline",
    "stages.papers.llm_srbench.pipeline",
)


def paper_spec(paper_id: str) -> str | None:
    """The pipeline module of registered paper `paper_id`, or None."""
    return next((spec for spec in PAPER_SPECS if spec.split(".")[2] == paper_id), None)


@cache
def _all_papers() -> Registry[Paper]:
    papers: Registry[Paper] = Registry("paper")
    for spec in PAPER_SPECS:
        paper = importlib.import_module(spec).PAPER
        papers.add(paper.id, paper)
    return papers


def __getattr__(name: str) -> Registry[Paper]:
    """`PAPERS`: every registered paper, imported on first use."""
    if name == "PAPERS":
        return _all_papers()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
