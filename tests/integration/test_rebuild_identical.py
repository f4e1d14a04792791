"""Same params and seed give the same data outputs: a second smoke run, made from scratch in another folder by
another process, has byte-identical outputs to the shared one (everything outside `timings/`).

This replaces a forced rerun in place: it checks the same thing (no wall-clock value
reaches a data output) and more (nothing depends on the folder), and the two builds run side by side on two
test workers instead of one after the other (see `pytest_xdist_make_scheduler` in tests/conftest.py).
"""

from __future__ import annotations

import pytest
import yaml

from stages.core.steps import is_timing_path
from stages.papers.registry import PAPERS
from tests.conftest import locked_out_md5s

pytestmark = pytest.mark.integration


def _data_outputs(md5s: dict[str, str], stages: list[str], workspace) -> list[str]:
    lock = yaml.safe_load((workspace / "dvc.lock").read_text())["stages"]
    paths = [out["path"] for name in stages for out in lock[name].get("outs", [])]
    return [path for path in paths if path in md5s and not is_timing_path(path)]


@pytest.mark.parametrize("paper_id", PAPERS.names())
def test_a_rebuild_gives_byte_identical_data_outputs(smoke_rebuild, smoke_run_md5s, paper_id):
    # every output outside timings/ (tables, claims.json, metrics, plot data, figures)
    paper = PAPERS.get(paper_id)
    stages = paper.pipeline.stage_names()
    data = _data_outputs(smoke_run_md5s, stages, smoke_rebuild)
    assert paper.claims_path in data
    declared = yaml.safe_load((smoke_rebuild / "dvc.yaml").read_text())["stages"]
    metrics = [
        path for name in stages for path in declared[name].get("metrics", []) if not is_timing_path(path)
    ]
    assert set(metrics) <= set(data)
    rebuilt = locked_out_md5s(smoke_rebuild)
    assert {path: rebuilt[path] for path in data} == {path: smoke_run_md5s[path] for path in data}


def test_a_rebuild_gives_byte_identical_shared_outputs(smoke_rebuild, smoke_run_md5s):
    # the stages no paper owns: the data sources, the params check, the claims report
    owned = {name for paper_id in PAPERS.names() for name in PAPERS.get(paper_id).pipeline.stage_names()}
    lock = yaml.safe_load((smoke_rebuild / "dvc.lock").read_text())["stages"]
    shared = [name for name in lock if name not in owned]
    data = _data_outputs(smoke_run_md5s, shared, smoke_rebuild)
    assert "reports/claims.md" in data and any(path.startswith("data/raw/") for path in data)
    rebuilt = locked_out_md5s(smoke_rebuild)
    assert {path: rebuilt[path] for path in data} == {path: smoke_run_md5s[path] for path in data}
