"""The registered papers, one line each. A paper is held to the shared contract (tests/papers) by being here.

`PAPERS` imports every paper's pipeline on first use; `load_paper` imports one paper's module only, so a stage
process or a paper's flow pays for its own paper alone.
"""

from __future__ import annotations

import importlib
from functools import cache

from stages.core.registry import Registry, UnknownNameError
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
    "stages.papers.bronet.pipeline",
    "stages.papers.dd3d.pipeline",
    "stages.papers.bdc.pipeline",
    "stages.papers.vanishing_ideals.pipeline",
    "stages.papers.climb.pipeline",
)


def paper_id_of(spec: str) -> str:
    """The paper id of a `PAPER_SPECS` entry (`stages.papers.<id>.pipeline`)."""
    return spec.split(".")[2]


def paper_spec(paper_id: str) -> str:
    """The `PAPER_SPECS` entry of `paper_id`, importing nothing; an unknown id lists the valid ones."""
    spec = next((spec for spec in PAPER_SPECS if paper_id_of(spec) == paper_id), None)
    if spec is None:
        valid = ", ".join(sorted(paper_id_of(spec) for spec in PAPER_SPECS))
        raise UnknownNameError(f"unknown paper '{paper_id}'; valid names: {valid}")
    return spec


def load_paper(paper_id: str) -> Paper:
    """Registered paper `paper_id`, importing its pipeline module only; an unknown id lists the valid ones."""
    return importlib.import_module(paper_spec(paper_id)).PAPER


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
