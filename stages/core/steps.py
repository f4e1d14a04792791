"""The step contract: a DVC stage is a thin step = load params → read inputs → pure functions → write outputs.

A :class:`Pipeline` (a paper, the dataset stages, the report) declares its steps once: the roles and paths of
their deps and outs, the params keys they read, their metrics and plots. `dvc.yaml` holds the same
declarations (it is the only DAG DVC and Prefect run); `tests/integration/test_dvc_spec.py` fails when the two
drift apart.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from stages.core.errors import PipelineError
from stages.core.io import OutputTransaction

_TEMPLATE = re.compile(r"\$\{\s*([^}\s]+)\s*\}")


@dataclass(frozen=True)
class Step:
    """One DVC stage. Paths may hold DVC templates such as `${mrmc.dataset}` resolved from params.yaml."""

    name: str
    run: Callable[[StepContext], None]
    deps: Mapping[str, str]
    outs: Mapping[str, str]
    params: tuple[str, ...]
    metrics: Mapping[str, str] = field(default_factory=dict)
    plots: Mapping[str, str] = field(default_factory=dict)
    code: tuple[str, ...] = ()
    description: str = ""

    def all_outputs(self) -> dict[str, str]:
        """Outs, metrics and plots by role (all are files the step writes)."""
        return {**self.outs, **self.metrics, **self.plots}


@dataclass(frozen=True)
class Pipeline:
    """A named group of steps sharing one params section and model."""

    id: str
    params_section: str
    params_model: type[BaseModel]
    steps: tuple[Step, ...]

    def stage_name(self, step: Step) -> str:
        """The DVC stage name of a step: `<pipeline id>-<step name>` (or the bare name for one-off stages)."""
        return f"{self.id}-{step.name}" if self.id else step.name

    def step(self, name: str) -> Step:
        """The step called `name`."""
        for step in self.steps:
            if step.name == name:
                return step
        valid = ", ".join(step.name for step in self.steps)
        raise PipelineError(f"pipeline '{self.id}' has no step '{name}'; steps: {valid}")


def resolve_template(text: str, raw_params: Mapping[str, Any]) -> str:
    """Substitute `${a.b.c}` with the value at that key path in the params (as DVC does)."""

    def lookup(match: re.Match[str]) -> str:
        node: Any = raw_params
        for part in match.group(1).split("."):
            if not isinstance(node, Mapping) or part not in node:
                raise PipelineError(f"params.yaml: key '{match.group(1)}' used in path '{text}' is not set")
            node = node[part]
        return str(node)

    return _TEMPLATE.sub(lookup, text)


@dataclass
class StepContext:
    """What a running step sees: validated params, resolved input paths, staged output paths."""

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
