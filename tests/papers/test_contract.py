"""The contract every registered paper is held to, by being registered."""

from __future__ import annotations

import pytest
import yaml

from stages.core.params import load_section
from stages.core.steps import is_timing_path
from stages.papers.registry import PAPERS

PAPER_IDS = PAPERS.names()


@pytest.mark.parametrize("paper_id", PAPER_IDS)
def test_params_section_validates(repo_root, paper_id):
    paper = PAPERS.get(paper_id)
    load_section(paper.pipeline.model(), paper.pipeline.params_section, repo_root / "params.yaml")
    assert paper.pipeline.params_section == paper_id


@pytest.mark.parametrize("paper_id", PAPER_IDS)
def test_smoke_params_validate(repo_root, paper_id):
    from stages.core.params import deep_merge, read_params_file, validate_section

    merged = deep_merge(
        read_params_file(repo_root / "params.yaml"), read_params_file(repo_root / "params.smoke.yaml")
    )
    validate_section(PAPERS.get(paper_id).pipeline.model(), merged[paper_id], paper_id)


@pytest.mark.parametrize("paper_id", PAPER_IDS)
def test_stages_declared_and_end_in_claims(repo_root, paper_id):
    pipeline = PAPERS.get(paper_id).pipeline
    assert pipeline.steps[-1].name == "claims"
    declared = yaml.safe_load((repo_root / "dvc.yaml").read_text())["stages"]
    for step in pipeline.steps:
        assert pipeline.stage_name(step) in declared
    claims_stage = declared[f"{paper_id}-claims"]
    assert claims_stage["outs"] == [f"data/{paper_id}/claims.json"]
    # the paper's one DVC metrics file (the columns of `dvc exp show`); its other metrics files are plain outs
    assert claims_stage["metrics"] == [f"data/{paper_id}/headline.json"]
    owned = [declared[pipeline.stage_name(step)] for step in pipeline.steps]
    assert [entry["metrics"] for entry in owned if "metrics" in entry] == [claims_stage["metrics"]]
    assert f"data/{paper_id}/claims.json" in declared["report"]["deps"]


@pytest.mark.parametrize("paper_id", PAPER_IDS)
def test_readme_exists_with_required_sections(paper_id):
    text = PAPERS.get(paper_id).readme.read_text()
    for heading in ("## What is reproduced", "## Deviations", "## Your own data", "## Claims"):
        assert heading in text, f"{paper_id} README lacks '{heading}'"


# ---- the shared battery: every registered paper inherits these by being registered ----


def _dvc_stages(repo_root):
    return yaml.safe_load((repo_root / "dvc.yaml").read_text())["stages"]


@pytest.mark.parametrize("paper_id", PAPER_IDS)
def test_a_papers_params_are_read_only_by_its_own_stages(repo_root, paper_id):
    # so editing one paper's section never reruns another paper (the smoke test checks it through DVC)
    readers = {
        name
        for name, stage in _dvc_stages(repo_root).items()
        if any(key == paper_id or key.startswith(f"{paper_id}.") for key in stage.get("params", []))
    }
    assert readers and all(name.startswith(f"{paper_id}-") for name in readers), readers


@pytest.mark.parametrize("paper_id", PAPER_IDS)
def test_every_step_says_what_it_does(paper_id):
    for step in PAPERS.get(paper_id).pipeline.steps:
        assert len(step.description) >= 10, (
            f"{paper_id}-{step.name}: give the Step a description (dvc.yaml desc)"
        )


@pytest.mark.parametrize("paper_id", PAPER_IDS)
def test_bad_params_name_the_key_and_leave_no_outputs(tmp_path, repo_root, paper_id):
    from stages.core.params import read_params_file, write_params_file
    from tests.conftest import run_cli

    params = read_params_file(repo_root / "params.yaml")
    params[paper_id]["no_such_key"] = 1
    write_params_file(params, tmp_path / "params.yaml")
    first_stage = PAPERS.get(paper_id).pipeline.stage_names()[0]
    result = run_cli(["stage", first_stage], tmp_path)
    assert result.returncode == 2, result.stderr
    assert f"{paper_id}.no_such_key: Extra inputs are not permitted" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("paper_id", PAPER_IDS)
def test_wall_clock_time_reaches_no_data_output(repo_root, paper_id):
    # in dvc.yaml: a stage reading a timings/ file writes only under timings/ (a benchmark step), and
    # claims about time live in the `timing` step's timings/claims.json, never in claims.json
    from stages.papers.paper import TIMING_STEP

    paper = PAPERS.get(paper_id)
    declared = _dvc_stages(repo_root)
    for step in paper.pipeline.steps:
        entry = declared[paper.pipeline.stage_name(step)]
        if any(is_timing_path(dep) for dep in entry["deps"]) or step.name == TIMING_STEP:
            outputs = [*entry.get("outs", []), *entry.get("metrics", [])]
            outputs += [
                next(iter(plot)) if isinstance(plot, dict) else plot for plot in entry.get("plots", [])
            ]
            assert outputs and all(is_timing_path(out) for out in outputs), (entry, outputs)
    if paper.timing_claims_path:
        assert paper.timing_claims_path in declared["report-timings"]["deps"]
        assert paper.timing_claims_path not in declared["report"]["deps"]
