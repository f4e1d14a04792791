"""The registered papers, one line each. A paper is held to the shared contract (tests/papers) by being here."""

from __future__ import annotations

import importlib

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
)

PAPERS: Registry[Paper] = Registry("paper")
for _spec in PAPER_SPECS:
    _paper = importlib.import_module(_spec).PAPER
    PAPERS.add(_paper.id, _paper)
