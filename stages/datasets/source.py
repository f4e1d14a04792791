"""The data-source interface: one named source per file, materialised by its generated `data-<name>` stage.

A :class:`Source` says how to load its artefact from its params, which files it came from (their md5 lands in
the provenance), which user-supplied file or folder is a DVC dep, and which :class:`Modality` it produces. A
modality fixes the artefact's outputs and the step that validates and writes it (classification tables and
graph tables today; text arrives as classification tables of embeddings; point clouds, sequences and
environments add a modality, not a new path through the platform).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stages.core.params import StrictModel


@dataclass(frozen=True)
class Modality:
    """What a source's stage writes (`data/raw/<name>/<file>` by role) and the step function that writes it."""

    name: str
    outs: dict[str, str]
    run: str


CLASSIFICATION = Modality(
    "classification",
    outs={"table": "table.parquet", "validation": "validation.json"},
    run="stages.datasets.classification_stage:run",
)
GRAPHS = Modality(
    "graphs",
    outs={"graphs": "graphs", "summary": "summary.json"},
    run="stages.datasets.graphs.stage:run",
)


@dataclass(frozen=True)
class Source:
    """A named raw source.

    - `load(params)` returns the artefact (a Polars table for classification, `GraphTables` for graphs);
    - `files(params)` lists the files it read (provenance by file name, md5);
    - `deps` are user-supplied paths (DVC templates such as `${common.datasets.table.path}`), DVC deps of the
      stage so that editing them reruns what depends on them;
    - `optional` sources get a stage only when `common.datasets.<name>` is set in params.yaml (they need a
      path of the user's);
    - `describe(params)`, for a user's table, says which columns were read and how labels were encoded (written
      to the validation report as `read_as`);
    - `dynamic_deps(raw_params)` adds deps that exist only under some params (a user's path that may be unset);
    - `check(params)` lists what is wrong with the user's files (wrong kind, missing files or columns); the params
      gate runs it before DVC deletes any output (`stages.core.inputs`).
    """

    name: str
    modality: Modality
    params_model: type[StrictModel]
    load: Callable[[Any], Any]
    description: str
    files: Callable[[Any], list[Path]] = lambda params: []
    deps: dict[str, str] = field(default_factory=dict)
    schema: Any = None
    optional: bool = False
    describe: Callable[[Any], dict[str, Any]] | None = None
    dynamic_deps: Callable[[Mapping[str, Any]], dict[str, str]] | None = None
    check: Callable[[Any], list[str]] | None = None

    def outputs(self) -> dict[str, str]:
        """The stage's outputs by role."""
        return {role: f"data/raw/{self.name}/{file}" for role, file in self.modality.outs.items()}
