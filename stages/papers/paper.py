"""What a paper plug-in declares: its pipeline and optional extras (benchmarks, own-data commands)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stages.core.steps import Pipeline

PAPERS_DIR = Path(__file__).parent


@dataclass(frozen=True)
class Paper:
    """A reproduced paper: id (= params section = stage prefix), title, pipeline and extras.

    - `benchmarks`: `module:function` returning a JSON-able dict (`icml25 bench <id>` runs it);
    - `commands`: modules whose `add_commands(subparsers)` adds own-data commands to `icml25`;
    - `timed_outputs`: outputs (besides `timings/*` and `claims.json`) that carry wall-clock seconds and so
      differ between reruns; the shared test battery checks every other output is byte-identical.
    """

    id: str
    title: str
    pipeline: Pipeline
    benchmarks: str | None = None
    commands: tuple[str, ...] = ()
    timed_outputs: tuple[str, ...] = ()

    @property
    def readme(self) -> Path:
        """The paper's README (what is reproduced, deviations, how to run it on your own data)."""
        return PAPERS_DIR / self.id / "README.md"

    @property
    def claims_path(self) -> str:
        """Where the paper's claims stage writes."""
        return f"data/{self.id}/claims.json"
