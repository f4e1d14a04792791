"""Same params and seed give the same data outputs: every stage of the smoke run, run again from scratch in
another folder by another process, writes byte-identical outputs (everything outside `timings/`).

The rebuild runs the stages' commands in DAG order without DVC (`_direct_build` in tests/conftest.py): the same
code paths as `dvc repro`, which runs each `cmd` in the workspace, without DVC's per-stage bookkeeping (it
rewrites the whole dvc.lock after every stage, the largest part of a smoke run's time). Under xdist the two builds
run side by side on two test workers (see `pytest_xdist_make_scheduler` in tests/conftest.py). Directory outputs are
compared file by file. The rebuild runs with another machine's kernel choices in its environment
(`OTHER_MACHINE_KERNELS`); `stages/platform/kernels.py` pins them back (`test_kernel_pin.py` has the control: without
the pin those choices change a model's bytes).

Slow (`make test-slow`): a second run of all ~80 smoke stages is ~8 CPU-minutes, a quarter of the default
suite's work. The default suite checks determinism per paper (each paper's tests) and the kernel pin on two
model-derived outputs (`test_kernel_pin.py`).
"""

from __future__ import annotations

import pytest
import yaml

from stages.core.steps import is_timing_path
from stages.papers.registry import PAPERS
from tests.conftest import output_file_md5s

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def declared_outputs(workspace, stages: list[str]) -> list[str]:
    """The outs, metrics and plots that dvc.yaml declares for `stages`, outside timings/."""
    declared = yaml.safe_load((workspace / "dvc.yaml").read_text())["stages"]
    paths = []
    for name in stages:
        for kind in ("outs", "metrics", "plots"):
            for item in declared[name].get(kind, []):
                paths.append(item if isinstance(item, str) else next(iter(item)))
    return [path for path in paths if not is_timing_path(path)]


def assert_same_files(smoke_rebuild, smoke_run_files, outputs: list[str]) -> None:
    def under(path: str) -> bool:
        return any(path == out or path.startswith(out.rstrip("/") + "/") for out in outputs)

    first = {path: md5 for path, md5 in smoke_run_files.items() if under(path)}
    assert first, outputs
    assert output_file_md5s(smoke_rebuild, outputs) == first


@pytest.mark.parametrize("paper_id", PAPERS.names())
def test_a_rebuild_gives_byte_identical_data_outputs(
    smoke_rebuild, smoke_run_files, smoke_run_md5s, paper_id
):
    # every output outside timings/ (tables, claims.json, metrics, plot data, figures)
    paper = PAPERS.get(paper_id)
    outputs = declared_outputs(smoke_rebuild, paper.pipeline.stage_names())
    assert paper.claims_path in outputs and set(outputs) <= set(smoke_run_md5s)
    assert_same_files(smoke_rebuild, smoke_run_files, outputs)


def test_a_rebuild_gives_byte_identical_shared_outputs(smoke_rebuild, smoke_run_files):
    # the stages no paper owns: the data sources, the params check, the claims report
    owned = {name for paper_id in PAPERS.names() for name in PAPERS.get(paper_id).pipeline.stage_names()}
    declared = yaml.safe_load((smoke_rebuild / "dvc.yaml").read_text())["stages"]
    outputs = declared_outputs(smoke_rebuild, [name for name in declared if name not in owned])
    assert "reports/claims.md" in outputs and any(path.startswith("data/raw/") for path in outputs)
    assert_same_files(smoke_rebuild, smoke_run_files, outputs)
