"""The contract every registered paper is held to, by being registered."""

from __future__ import annotations

import pytest
import yaml

from stages.core.claims import read_claims
from stages.core.params import load_section
from stages.papers.registry import PAPERS

PAPER_IDS = PAPERS.names()


@pytest.mark.parametrize("paper_id", PAPER_IDS)
def test_params_section_validates(repo_root, paper_id):
    paper = PAPERS.get(paper_id)
    load_section(paper.pipeline.params_model, paper.pipeline.params_section, repo_root / "params.yaml")
    assert paper.pipeline.params_section == paper_id


@pytest.mark.parametrize("paper_id", PAPER_IDS)
def test_smoke_params_validate(repo_root, paper_id):
    from stages.core.params import deep_merge, read_params_file, validate_section

    merged = deep_merge(
        read_params_file(repo_root / "params.yaml"), read_params_file(repo_root / "params.smoke.yaml")
    )
    validate_section(PAPERS.get(paper_id).pipeline.params_model, merged[paper_id], paper_id)


@pytest.mark.parametrize("paper_id", PAPER_IDS)
def test_stages_declared_and_end_in_claims(repo_root, paper_id):
    pipeline = PAPERS.get(paper_id).pipeline
    assert pipeline.steps[-1].name == "claims"
    declared = yaml.safe_load((repo_root / "dvc.yaml").read_text())["stages"]
    for step in pipeline.steps:
        assert pipeline.stage_name(step) in declared
    claims_stage = declared[f"{paper_id}-claims"]
    assert claims_stage["outs"] == [f"data/{paper_id}/claims.json"]
    assert f"data/{paper_id}/claims.json" in declared["report"]["deps"]


@pytest.mark.parametrize("paper_id", PAPER_IDS)
def test_readme_exists_with_required_sections(paper_id):
    text = PAPERS.get(paper_id).readme.read_text()
    for heading in ("## What is reproduced", "## Deviations", "## Your own data", "## Claims"):
        assert heading in text, f"{paper_id} README lacks '{heading}'"


@pytest.mark.integration
@pytest.mark.parametrize("paper_id", PAPER_IDS)
def test_smoke_run_writes_schema_valid_claims(smoke_workspace, paper_id):
    claims = read_claims(smoke_workspace / PAPERS.get(paper_id).claims_path)
    assert len(claims) >= 1
    assert all(claim.measured for claim in claims)
