"""What a running step sees: its validated params, resolved input paths and staged output paths."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stages.core.io import OutputTransaction


@dataclass
class StepContext:
    """The one argument of every step function (`run(ctx)`)."""

    stage: str
    params: Any
    common: Any
    inputs: dict[str, Path]
    outputs: OutputTransaction
    output_paths: dict[str, Path]
    started: float = field(default_factory=time.perf_counter)

    def input(self, role: str) -> Path:
        """Path of the declared input `role`."""
        return self.inputs[role]

    def output(self, role: str) -> Path:
        """Staging path to write the declared output `role` to (moved into place when the step succeeds)."""
        return self.outputs.path(self.output_paths[role])

    def log(self, message: str) -> None:
        """A progress line on stderr, prefixed with the stage name and elapsed time."""
        print(
            f"[{self.stage} +{time.perf_counter() - self.started:6.1f}s] {message}",
            file=sys.stderr,
            flush=True,
        )
