"""Step specs: the one declaration of each DVC stage, from which `dvc.yaml` is generated.

A :class:`Pipeline` (a paper, the dataset stages, a reusable method stage, the report) declares its steps once:
the roles and paths of their deps and outs (taken from the pipeline's :class:`Catalog`), the params keys they
read, their metrics and plots (with axes), and the function that runs them. Code deps are not declared: they
are the step module's import closure, computed (`stages.core.closure`). Functions and params models are named
by import path (`"package.module:attr"`), so reading the specs imports no torch, GX or RDKit.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stages.core.errors import PipelineError

_TEMPLATE = re.compile(r"\$\{\s*([^}\s]+)\s*\}")
TIMINGS_DIR = "timings"
"""Wall-clock seconds are written only under a folder of this name, and no data output may read them."""


def is_timing_path(path: str) -> bool:
    """Whether `path` lies under a `timings/` folder (wall-clock seconds: differ on every run)."""
    return TIMINGS_DIR in path.split("/")[:-1]


def import_ref(ref: str) -> Any:
    """The object at `package.module:attribute`."""
    module, _, attribute = ref.partition(":")
    if not attribute:
        raise PipelineError(f"'{ref}' is not a reference of the form package.module:attribute")
    return getattr(importlib.import_module(module), attribute)


class Catalog:
    """The named artefacts of one pipeline: each data path written once, referred to by name."""

    def __init__(self, root: str, **files: str) -> None:
        self.root = root.rstrip("/")
        self._paths = {name: f"{self.root}/{relative}" for name, relative in files.items()}

    def __getitem__(self, name: str) -> str:
        try:
            return self._paths[name]
        except KeyError:
            raise PipelineError(
                f"catalog {self.root}: no artefact '{name}'; artefacts: {', '.join(self._paths)}"
            ) from None

    def pick(self, *names: str, **renamed: str) -> dict[str, str]:
        """`{role: path}` for artefacts used under their own name, and `role=artefact` for renamed ones."""
        return {name: self[name] for name in names} | {role: self[name] for role, name in renamed.items()}


@dataclass(frozen=True)
class Plot:
    """A plot file: a CSV/JSON table with axes (rendered by `dvc plots show`) or an image (axes left unset)."""

    path: str
    x: str | None = None
    y: str | None = None
    template: str | None = None
    title: str | None = None
    x_label: str | None = None
    y_label: str | None = None

    def dvc_entry(self) -> str | dict[str, dict[str, str]]:
        """The `plots:` entry of dvc.yaml."""
        props = {
            key: value
            for key, value in (
                ("x", self.x),
                ("y", self.y),
                ("template", self.template),
                ("title", self.title),
                ("x_label", self.x_label),
                ("y_label", self.y_label),
            )
            if value is not None
        }
        return {self.path: props} if props else self.path


DynamicDeps = Callable[[Mapping[str, Any]], Mapping[str, str]]


@dataclass(frozen=True)
class Step:
    """One DVC stage. Paths may hold DVC templates such as `${mrmc.dataset}`, resolved from params.yaml.

    `run` is `module:function` (default: the pipeline's package + the step name + `:run`); the function is
    called as `function(ctx, **args)`. `modules` adds roots to the code-dep closure (a data source's module).
    `dynamic_deps(raw_params)` gives deps that depend on params values (a list of datasets); they are resolved
    when `dvc.yaml` is generated and checked again when the stage runs.

    `metrics` are the step's JSON metrics files (the audit and the run summary read them); in dvc.yaml they are
    plain outs. `headline` files are the DVC metrics, the columns of `dvc exp show`: each paper's claims step
    declares one, a verdict per claim, so the table stays a few columns per paper (`stages.core.headline`).
    """

    name: str
    deps: Mapping[str, str]
    outs: Mapping[str, str]
    params: tuple[str, ...] = ()
    metrics: Mapping[str, str] = field(default_factory=dict)
    headline: Mapping[str, str] = field(default_factory=dict)
    plots: Mapping[str, Plot] = field(default_factory=dict)
    description: str = ""
    run: str | None = None
    args: Mapping[str, Any] = field(default_factory=dict)
    modules: tuple[str, ...] = ()
    dynamic_deps: DynamicDeps | None = None

    def all_outputs(self) -> dict[str, str]:
        """Outs, metrics, headline and plots by role (all are files the step writes)."""
        plots = {role: plot.path for role, plot in self.plots.items()}
        return {**self.outs, **self.metrics, **self.headline, **plots}

    def data_deps(self, raw_params: Mapping[str, Any]) -> dict[str, str]:
        """Declared deps plus the params-dependent ones, by role (paths may still hold templates)."""
        extra = dict(self.dynamic_deps(raw_params)) if self.dynamic_deps else {}
        clash = sorted(set(extra) & set(self.deps))
        if clash:
            raise PipelineError(f"step '{self.name}': dynamic deps reuse roles {clash}")
        return {**self.deps, **extra}


@dataclass(frozen=True)
class Pipeline:
    """A named group of steps sharing one params section and model.

    `package` holds the step modules; `params_model` is `module:Class`. Stage names are
    `<id>-<step>` (or the bare step name when `id` is empty).
    """

    id: str
    package: str
    params_section: str
    params_model: str
    steps: tuple[Step, ...]

    @classmethod
    def of_paper(cls, paper_id: str, params_class: str, steps: tuple[Step, ...]) -> Pipeline:
        """A paper's pipeline by convention: steps in `stages.papers.<id>`, params section `<id>`, model
        `stages.papers.<id>.params:<params_class>`."""
        package = f"stages.papers.{paper_id}"
        return cls(paper_id, package, paper_id, f"{package}.params:{params_class}", steps)

    def stage_name(self, step: Step) -> str:
        """The DVC stage name of a step: `<pipeline id>-<step name>` (or the bare name for one-off stages)."""
        return f"{self.id}-{step.name}" if self.id else step.name

    def stage_names(self) -> list[str]:
        """Every stage of the pipeline, in declaration order."""
        return [self.stage_name(step) for step in self.steps]

    def step(self, name: str) -> Step:
        """The step called `name`."""
        for step in self.steps:
            if step.name == name:
                return step
        valid = ", ".join(step.name for step in self.steps)
        raise PipelineError(f"pipeline '{self.id}' has no step '{name}'; steps: {valid}")

    def run_ref(self, step: Step) -> str:
        """`module:function` that runs the step."""
        return step.run or f"{self.package}.{step.name}:run"

    def code_roots(self, step: Step) -> tuple[str, ...]:
        """Modules whose import closure is the step's code: its function's, its params model's, any extra."""
        return (
            self.run_ref(step).partition(":")[0],
            self.params_model.partition(":")[0],
            *step.modules,
        )

    def model(self) -> Any:
        """The params model class."""
        return import_ref(self.params_model)


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
