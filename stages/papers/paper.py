"""What a paper plug-in declares: its pipeline and optional extras (benchmarks, own-data commands)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stages.core.steps import Pipeline

PAPERS_DIR = Path(__file__).parent
TIMING_STEP = "timing"
"""The benchmark step that judges a paper's claims about wall-clock time (`timings/claims.json`)."""


@dataclass(frozen=True)
class Paper:
    """A reproduced paper: id (= params section = stage prefix), title, pipeline and extras.

    - `benchmarks`: `module:function` returning a JSON-able dict (`icml25 bench <id>` runs it);
    - `commands`: modules whose `add_commands(subparsers)` adds own-data commands to `icml25`;
    - `input_check`: `module:function` taking the paper's params and listing what is wrong with the user's
      files they name (the params gate runs it before DVC deletes any output).

    Wall-clock seconds go only to files under a `timings/` folder, which no data output reads (checked when
    `dvc.yaml` is generated); claims about time are judged by a benchmark step named `timing` that writes
    `timings/claims.json`. Every other output is byte-identical on rerun (the shared test battery checks it).
    """

    id: str
    title: str
    pipeline: Pipeline
    benchmarks: str | None = None
    commands: tuple[str, ...] = ()
    input_check: str | None = None

    @property
    def readme(self) -> Path:
        """The paper's README (what is reproduced, deviations, how to run it on your own data)."""
        return PAPERS_DIR / self.id / "README.md"

    @property
    def claims_path(self) -> str:
        """Where the paper's claims stage writes."""
        return f"data/{self.id}/claims.json"

    @property
    def timing_claims_path(self) -> str | None:
        """Where the paper's benchmark step `timing` writes its claims about time, if it has one."""
        has_timing = any(step.name == TIMING_STEP for step in self.pipeline.steps)
        return f"data/{self.id}/timings/claims.json" if has_timing else None
