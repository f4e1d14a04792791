"""`tu`: your graph dataset in the TU format (`<path>/<name>_A.txt`, `_graph_indicator.txt`, ...).

Optional: its stage exists once `common.datasets.tu: {path, name}` is set in params.yaml (then run
`icml25 dvc-yaml`). The folder is a DVC dep, so editing its files reruns everything that uses it.
"""

from __future__ import annotations

from pathlib import Path

from stages.core.inputs import folder_problems
from stages.core.io import file_md5
from stages.core.params import StrictModel
from stages.datasets.source import GRAPHS, Source


class TuParams(StrictModel):
    """The folder and the dataset name (the files' prefix)."""

    path: str
    name: str


def load(params: TuParams):
    """The TU dataset as graph tables, with the md5 of each of its files."""
    from stages.datasets.graphs.tu_format import load_tu_dataset

    folder = Path(params.path)
    files = sorted(folder.glob(f"{params.name}_*.txt"))
    tables = load_tu_dataset(folder, params.name)
    return tables, {"files": {path.name: file_md5(path) for path in files}}


SOURCE = Source(
    "tu",
    GRAPHS,
    TuParams,
    load,
    "your TU-format graph dataset (common.datasets.tu.path / name)",
    deps={"input": "${common.datasets.tu.path}"},
    optional=True,
    check=lambda params: folder_problems(
        params.path,
        "common.datasets.tu.path",
        [f"{params.name}_{part}.txt" for part in ("A", "graph_indicator", "graph_labels")],
    ),
)
