"""The smoke profile through real `dvc repro`: outputs, no-op second run, per-paper invalidation."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from stages.core.claims import read_claims
from stages.core.dvc_cli import run_dvc
from stages.core.params import apply_overrides, read_params_file, write_params_file
from stages.papers.registry import PAPERS
from stages.platform.lock_status import lock_status
from stages.platform.results import RESULTS_DOC, check_results, write_results

pytestmark = pytest.mark.integration


def test_every_stage_produced_its_outputs(smoke_workspace):
    for path in (
        "data/mrmc/metrics.json",
        "data/mrmc/figures/accuracy_vs_budget.png",
        "reports/claims.md",
        "data/coreset/selection.parquet",
        "data/raw/digits/validation.json",
    ):
        assert (smoke_workspace / path).is_file(), path
    assert "| mrmc |" in (smoke_workspace / "reports/claims.md").read_text()
    metrics = json.loads((smoke_workspace / "data/mrmc/metrics.json").read_text())
    assert 0 <= metrics["full"]["all"]["mean_accuracy"] <= 1


@pytest.mark.parametrize("paper_id", PAPERS.names())
def test_smoke_run_writes_schema_valid_claims_and_their_headline(smoke_workspace, paper_id):
    claims = read_claims(smoke_workspace / PAPERS.get(paper_id).claims_path)
    assert len(claims) >= 1
    assert all(claim.measured for claim in claims)
    headline = json.loads((smoke_workspace / f"data/{paper_id}/headline.json").read_text())
    assert headline == {claim.id: claim.verdict for claim in claims}
    # the contract: every claim carries its design (the schema requires the fields; here, that they say
    # something and that detectable covers every compared quantity)
    timing = PAPERS.get(paper_id).timing_claims_path
    for claim in claims + (read_claims(smoke_workspace / timing) if timing else []):
        assert claim.could_hold.strip() and claim.could_fail.strip() and claim.could_hold != claim.could_fail
        assert set(claim.detectable) == {item.name for item in claim.evidence}, claim.id
        # n: the units every compared quantity is known on; 0 only where censoring left none, which cannot decide
        assert claim.n >= 1 or claim.verdict == "inconclusive", claim.id


def test_dvc_exp_show_has_one_column_per_claim(smoke_workspace):
    # the headline files are the only DVC metrics: every paper's detailed metrics stay out of the table
    shown = json.loads(run_dvc(["exp", "show", "--json"], smoke_workspace, capture=True).stdout)
    metrics = shown[0]["data"]["metrics"]
    assert set(metrics) == {f"data/{paper_id}/headline.json" for paper_id in PAPERS.names()}
    columns = sum(len(entry["data"]) for entry in metrics.values())
    claims = sum(len(read_claims(smoke_workspace / PAPERS.get(p).claims_path)) for p in PAPERS.names())
    assert columns == claims < 8 * len(PAPERS.names())


def test_second_repro_reruns_nothing(smoke_workspace):
    status = run_dvc(["status", "--json"], smoke_workspace, capture=True)
    assert json.loads(status.stdout) == {}
    repro = run_dvc(["repro"], smoke_workspace, capture=True)
    assert "Running stage" not in repro.stdout


def _stages_that_would_run(workspace):
    dry = run_dvc(["repro", "--dry"], workspace, capture=True)
    return set(re.findall(r"Running stage '([^']+)'", dry.stdout))


@pytest.mark.parametrize(
    ("override", "changed"),
    [
        ("mrmc.train.epochs=3", {"params", "mrmc-train", "mrmc-cost"}),
        ("mrmc.pool_size=500", {"params", "mrmc-prepare"}),
        ("mrmc.claims.uneven_ratio=2.0", {"params", "mrmc-claims", "mrmc-cost", "mrmc-timing"}),
        ("coreset.budget=0.2", {"params", "coreset-select"}),
    ],
)
def test_editing_a_param_reruns_only_the_stages_that_read_it(smoke_workspace, override, changed):
    # `dvc repro --dry` lists the stages whose own deps changed; their downstream stages follow only if
    # those outputs change. No stage of another paper or dataset is listed.
    params_path = smoke_workspace / "params.yaml"
    original = params_path.read_text()
    try:
        write_params_file(apply_overrides(read_params_file(params_path), [override]), params_path)
        assert _stages_that_would_run(smoke_workspace) == changed
    finally:
        params_path.write_text(original)  # the last test of this module checks the workspace is up to date


def _stale_stages(workspace):
    return set(json.loads(run_dvc(["status", "--json"], workspace, capture=True).stdout))


def test_a_new_unrelated_file_under_stages_leaves_every_stage_up_to_date(smoke_workspace):
    new_file = smoke_workspace / "stages" / "methods" / "unrelated_helper.py"
    try:
        new_file.write_text('"""A module no stage imports."""\n\nANSWER = 42\n')
        assert _stale_stages(smoke_workspace) == set()
    finally:
        new_file.unlink()


def _lock_stale(workspace) -> tuple[set[str], set[str]]:
    """(stages stale by their own deps, stages stale in all: own and downstream) by `icml25 lock-status`."""
    statuses = lock_status(workspace)
    return {s.name for s in statuses if s.reasons}, {s.name for s in statuses if not s.fresh}


def test_lock_status_is_clean_on_the_fresh_smoke_run(smoke_workspace):
    statuses = lock_status(smoke_workspace)
    assert [status.name for status in statuses if not status.fresh] == []
    assert not any(status.unchecked for status in statuses)  # every data dep present and checked
    assert len(statuses) == len(yaml.safe_load((smoke_workspace / "dvc.yaml").read_text())["stages"])


def test_lock_status_names_an_edited_step_and_its_downstream_only(smoke_workspace):
    module = smoke_workspace / "stages" / "methods" / "graphs" / "separability.py"
    original = module.read_text()
    try:
        module.write_text(original + "\n\ndef _edited() -> None:\n    pass\n")
        own, stale = _lock_stale(smoke_workspace)
        assert own == {"rings-separability", "rings-report"}
        assert stale == own | {"rings-claims", "report"}
    finally:
        module.write_text(original)
    assert _lock_stale(smoke_workspace) == (set(), set())


def test_lock_status_names_the_stages_that_read_an_edited_param(smoke_workspace):
    params_path = smoke_workspace / "params.yaml"
    original = params_path.read_text()
    try:
        write_params_file(
            apply_overrides(read_params_file(params_path), ["mrmc.train.epochs=3"]), params_path
        )
        own, stale = _lock_stale(smoke_workspace)
        # the gate reads the whole file; its constant output leaves its downstream alone
        assert own == {"params", "mrmc-train", "mrmc-cost"}
        downstream = {"mrmc-evaluate", "mrmc-claims", "mrmc-timing", "report", "report-timings"}
        assert stale == own | downstream
    finally:
        params_path.write_text(original)


def test_result_tables_are_generated_and_a_hand_edit_fails_the_check(smoke_workspace):
    readme = smoke_workspace / "stages" / "papers" / "mrmc" / "README.md"
    readmes = [smoke_workspace / "stages" / "papers" / pid / "README.md" for pid in PAPERS.names()]
    originals = {path: path.read_text() for path in (*readmes, smoke_workspace / "README.md")}
    doc = smoke_workspace / RESULTS_DOC
    originals[doc] = doc.read_text() if doc.is_file() else None
    try:
        write_results(smoke_workspace)
        assert check_results(smoke_workspace) == []
        claims = read_claims(smoke_workspace / "data" / "mrmc" / "claims.json")
        text = readme.read_text()
        assert f"| `{claims[0].id}` | **{claims[0].verdict}** |" in text
        # one verdict typed over inside the generated block: the digest and the regenerated table both catch it
        start = text.index("<!-- results:begin")
        cell = f"| `{claims[0].id}` | **{claims[0].verdict}** |"
        typed = f"| `{claims[0].id}` | **{'fails' if claims[0].verdict != 'fails' else 'holds'}** |"
        edited = text[:start] + text[start:].replace(cell, typed, 1)
        readme.write_text(edited)
        problems = check_results(smoke_workspace)
        assert any("mrmc/README.md: the generated results table was edited by hand" in p for p in problems)
        assert any("differs from data/mrmc/claims.json" in p for p in problems)
    finally:
        for path, text in originals.items():
            path.unlink(missing_ok=True) if text is None else path.write_text(text)


def test_editing_a_module_makes_exactly_the_stages_that_import_it_stale(smoke_workspace):
    # separability.py holds separability_results: the tests' stage and the report read it, training does not
    module = smoke_workspace / "stages" / "methods" / "graphs" / "separability.py"
    original = module.read_text()
    try:
        module.write_text(original + "\n\ndef _edited() -> None:\n    pass\n")
        assert _stale_stages(smoke_workspace) == {"rings-separability", "rings-report"}
    finally:
        module.write_text(original)
    assert _stale_stages(smoke_workspace) == set()
