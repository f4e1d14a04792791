"""The registered papers. A paper is held to the shared contract (tests/papers) by being listed here."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stages.core.registry import Registry
from stages.core.steps import Pipeline
from stages.papers.dynamic_selection.pipeline import PIPELINE as DYNAMIC_SELECTION_PIPELINE
from stages.papers.info_coevolution.pipeline import PIPELINE as INFO_COEVOLUTION_PIPELINE
from stages.papers.mrmc.pipeline import PIPELINE as MRMC_PIPELINE
from stages.papers.rings.pipeline import PIPELINE as RINGS_PIPELINE

PAPERS_DIR = Path(__file__).parent


@dataclass(frozen=True)
class Paper:
    """A reproduced paper: its id (= params section = stage prefix), title and pipeline."""

    id: str
    title: str
    pipeline: Pipeline

    @property
    def readme(self) -> Path:
        """The paper's README (what is reproduced, deviations, how to run it on your own data)."""
        return PAPERS_DIR / self.id / "README.md"

    @property
    def claims_path(self) -> str:
        """Where the paper's claims stage writes."""
        return f"data/{self.id}/claims.json"


PAPERS: Registry[Paper] = Registry("paper")
PAPERS.add(
    "mrmc",
    Paper("mrmc", "MRMC: core-set selection by Maximum Reduction as Maximum Contribution", MRMC_PIPELINE),
)
PAPERS.add(
    "info_coevolution",
    Paper(
        "info_coevolution",
        "Info-Coevolution: online selective annotation that lets model and data co-evolve",
        INFO_COEVOLUTION_PIPELINE,
    ),
)
PAPERS.add(
    "dynamic_selection",
    Paper(
        "dynamic_selection",
        "When dynamic data selection meets data augmentation: per-epoch selection by density × consistency",
        DYNAMIC_SELECTION_PIPELINE,
    ),
)
PAPERS.add(
    "rings",
    Paper(
        "rings",
        "RINGS: auditing graph-learning datasets by perturbing their structure and feature modes",
        RINGS_PIPELINE,
    ),
)
