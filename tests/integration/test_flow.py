"""The Prefect paper flow on smoke params: tasks are the paper's DVC stages in DAG order, run through DVC."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from stages.core.dvc_cli import run_dvc
from stages.core.params import apply_overrides, read_params_file, write_params_file

pytestmark = pytest.mark.integration

EXPECTED = [
    "params",  # the params check runs first, so a bad value fails before any output is deleted
    "data-fashion_mnist",
    "mrmc-prepare",
    "mrmc-trace",
    "mrmc-select",
    "mrmc-train",
    "mrmc-cost",
    "mrmc-evaluate",
    "mrmc-timing",  # the benchmark step: the claim about time, from timings/ only
    "mrmc-claims",
]


@pytest.fixture(scope="module")
def prefect_harness(tmp_path_factory):
    import os

    os.environ["PREFECT_HOME"] = str(tmp_path_factory.mktemp("prefect-home"))
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


def test_paper_stages_come_from_dvc_in_dag_order(repo_root):
    from stages.core.dvc_graph import paper_stages

    assert paper_stages("mrmc", repo_root) == EXPECTED


def test_flow_runs_stages_through_dvc_and_publishes_results(mrmc_selected, prefect_harness):
    from prefect.client.orchestration import get_client

    from flows.paper_flow import paper_flow

    workspace = mrmc_selected  # the stages up to mrmc-select are up to date: DVC skips them, the rest run
    assert paper_flow(paper="mrmc", workspace=str(workspace)) == EXPECTED
    lock = yaml.safe_load((workspace / "dvc.lock").read_text())["stages"]
    assert set(EXPECTED) <= set(lock)
    assert (workspace / "data/mrmc/claims.json").is_file()

    async def read_artifact():
        async with get_client() as client:
            return await client.read_latest_artifacts()

    import asyncio

    artifacts = asyncio.run(read_artifact())
    markdown = next(a for a in artifacts if a.key == "mrmc-results").data
    assert "accuracy_vs_random" in markdown and "mean_accuracy" in markdown
    audit = next(a for a in artifacts if a.key == "mrmc-audit").data
    assert "data/mrmc/pool.parquet" in audit and "`mrmc.train.epochs` = `2`" in audit

    # what the flow asks DVC in-process before each task agrees with `dvc status`: all current after the
    # run, and after a claims threshold edit the same stages (those reading mrmc.claims, and the gate) are not
    from stages.core.dvc_graph import StageChecker

    params_path = workspace / "params.yaml"
    assert all(StageChecker(workspace).is_current(stage) for stage in EXPECTED)
    original = params_path.read_text()
    write_params_file(
        apply_overrides(read_params_file(params_path), ["mrmc.claims.uneven_ratio=2.5"]), params_path
    )
    stale = [stage for stage in EXPECTED if not StageChecker(workspace).is_current(stage)]
    status = json.loads(run_dvc(["status", "--json"], workspace, capture=True, lock=False).stdout)
    assert stale == [stage for stage in EXPECTED if stage in status] and "mrmc-claims" in stale, stale
    assert "mrmc-train" not in stale
    params_path.write_text(original)

    # A failing stage fails its task with the stage's own message; finished stages are not rerun.
    write_params_file(apply_overrides(read_params_file(params_path), ["mrmc.train.epochs=0"]), params_path)
    with pytest.raises(Exception, match=r"mrmc\.train\.epochs"):
        paper_flow(paper="mrmc", workspace=str(workspace))


def test_unknown_paper_fails_before_prefect_starts(repo_root):
    from tests.conftest import run_cli

    result = run_cli(["flow", "mrcm"], repo_root)
    assert result.returncode == 2
    from stages.papers.registry import PAPERS

    assert f"unknown paper 'mrcm'; valid names: {', '.join(sorted(PAPERS.names()))}" in result.stderr


def test_flow_command_serves_prefects_api_in_its_own_process(mrmc_baseline, tmp_path):
    """`icml25 flow` without PREFECT_API_URL runs Prefect's API app in a process it forked (not Prefect's second
    interpreter, no "temporary server", no fallback to a thread), records the run in PREFECT_HOME's database, and
    skips every stage from one DVC plan."""
    import shutil
    import sqlite3

    from tests.conftest import run_cli

    workspace = Path(shutil.copytree(mrmc_baseline, tmp_path / "ws", symlinks=True))
    # the baseline ran `dvc repro mrmc-claims`, which leaves out the benchmark branch (mrmc-cost, mrmc-timing)
    run_dvc(["repro", "mrmc-timing"], workspace, capture=True)
    home = tmp_path / "prefect-home"
    env = {"PREFECT_HOME": str(home)}
    result = run_cli(["flow", "mrmc", "--workspace", str(workspace)], workspace, env)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert "temporary server" not in output and "serving it from a thread" not in output
    assert output.count("didn't change, skipping") == len(EXPECTED), output[-6000:]
    with sqlite3.connect(home / "prefect.db") as database:
        flow_states = database.execute("select state_type from flow_run").fetchall()
        task_names = {name for (name,) in database.execute("select name from task_run")}
    assert flow_states == [("COMPLETED",)]
    assert {name.rsplit("-", 1)[0] for name in task_names} == set(EXPECTED)


def test_a_configured_api_url_is_used_as_it_is():
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from flows.embedded_api import embedded_api

    with temporary_settings({PREFECT_API_URL: "http://127.0.0.1:9/api"}), embedded_api() as url:
        assert url == "http://127.0.0.1:9/api"
        assert PREFECT_API_URL.value() == url


def test_plan_made_in_a_forked_process_is_the_in_process_one(mrmc_baseline, tmp_path):
    import shutil

    from stages.core.dvc_graph import StageChecker, plan_in_background

    workspace = Path(shutil.copytree(mrmc_baseline, tmp_path / "ws", symlinks=True))
    forked = plan_in_background("mrmc", str(workspace)).result(timeout=120)
    assert forked == StageChecker(workspace).plan("mrmc")
    assert forked.stages == EXPECTED
    # the baseline ran `dvc repro mrmc-claims`, which leaves out the benchmark branch
    assert set(EXPECTED) - forked.current == {"mrmc-cost", "mrmc-timing"}
    assert StageChecker(workspace).still_reads(forked)
