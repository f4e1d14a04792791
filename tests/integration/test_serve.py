"""A real Prefect server on a free localhost port serves the deployments; a run triggered through the API with
an override becomes a DVC experiment carrying it; a real browser fills the run form, sees a bad value refused
on its field, runs, and finds the audit on the run it lands on; a cross-origin request, a request without a
CSRF token and a run pointed at another folder are refused; `icml25 serve --stop` stops everything it started
and nothing else."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
import yaml

from stages.core.dvc_cli import subprocess_env
from stages.platform.audit import audit_record
from stages.platform.experiments import experiment_revs
from tests.conftest import free_port
from tests.integration.prefect_ui import (
    MISSING_BROWSER,
    browser_available,
    click_text,
    form_field,
    page_text,
    screenshot,
    start_browser,
    type_into,
    wait_for,
)

pytestmark = pytest.mark.integration


def _port_open(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def served_workspace(mrmc_baseline, tmp_path_factory):
    """A copy of the committed MRMC smoke baseline: the folder `icml25 serve` serves."""
    return Path(shutil.copytree(mrmc_baseline, tmp_path_factory.mktemp("served") / "ws", symlinks=True))


@pytest.fixture(scope="module")
def served(served_workspace, tmp_path_factory):
    """`icml25 serve` on a free port for this module's tests (the browser's first, the API's last: it stops
    the server and checks that everything it started is gone)."""
    port = free_port()
    home = tmp_path_factory.mktemp("prefect-home")
    env = {**subprocess_env(), "PREFECT_HOME": str(home), "ICML25_PROGRESS": "0"}
    command = [
        sys.executable,
        "-m",
        "flows",
        "serve",
        "--port",
        str(port),
        "--workspace",
        str(served_workspace),
        "--no-auth",  # the browser test drives the run form, not the login page (auth: test_serve_security)
    ]
    process = subprocess.Popen(
        command,
        cwd=served_workspace,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    pid_file = served_workspace / ".dvc/tmp/icml25-serve.json"
    try:
        deadline = time.monotonic() + 180
        while not pid_file.is_file():
            assert process.poll() is None, "icml25 serve exited early"
            assert time.monotonic() < deadline, "icml25 serve did not start"
            time.sleep(0.5)
        yield port, json.loads(pid_file.read_text())["pids"], process
    finally:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "flows",
                "serve",
                "--stop",
                "--workspace",
                str(served_workspace),
            ],
            env=env,
            check=False,
            capture_output=True,
        )
        process.wait(timeout=60)


def _status(request: urllib.request.Request) -> tuple[int, dict[str, str]]:
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers)


def assert_cross_origin_refused(port: int) -> None:
    """A page on another origin gets no CORS grant, and a POST without a CSRF token is forbidden."""
    url = f"http://127.0.0.1:{port}/api/deployments/filter"
    preflight = urllib.request.Request(
        url,
        method="OPTIONS",
        headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"},
    )
    status, headers = _status(preflight)
    assert status >= 400, status
    assert headers.get("access-control-allow-origin") not in {"*", "http://evil.example"}
    own = urllib.request.Request(
        url,
        method="OPTIONS",
        headers={"Origin": f"http://127.0.0.1:{port}", "Access-Control-Request-Method": "POST"},
    )
    assert _status(own)[0] == 200  # the UI's own origin is allowed
    post = urllib.request.Request(
        url,
        data=b"{}",
        method="POST",
        headers={"Content-Type": "application/json", "Origin": "http://evil.example"},
    )
    status, _ = _status(post)
    assert status == 403, status


def read_deployment(name: str, timeout: float = 120.0):
    """The deployment, once `serve` has registered it (a moment after the server answers)."""
    import asyncio

    from prefect.client.orchestration import get_client

    async def read():
        async with get_client() as client:
            return await client.read_deployment_by_name(name)

    deadline = time.monotonic() + timeout
    while True:
        try:
            return asyncio.run(read())
        except Exception:
            assert time.monotonic() < deadline, f"deployment {name} never registered"
            time.sleep(1.0)


def assert_workspace_not_a_parameter(deployment_name: str, workspace) -> None:
    """No deployment takes a folder, and a run asking for one ends at Prefect's parameter check (the
    flow's signature has no such parameter), before the flow body, and so DVC, runs."""
    from prefect.deployments import run_deployment

    schema = read_deployment(deployment_name).parameter_openapi_schema
    assert "workspace" not in schema["properties"]
    experiments_before = experiment_revs(workspace)
    run = run_deployment(deployment_name, parameters={"workspace": "/tmp"}, timeout=300)
    assert run.state.is_failed() or run.state.is_crashed(), run.state
    assert experiment_revs(workspace) == experiments_before  # nothing ran


def assert_landing_run_tells_the_story(flow_run_id, experiment: str) -> None:
    """The run the UI opens is named after its experiment and carries the summary and audit artifacts and
    DVC's stage lines (streamed into its log as they were printed)."""
    import asyncio

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        ArtifactFilterFlowRunId,
        LogFilter,
        LogFilterFlowRunId,
    )

    async def read():
        async with get_client() as client:
            run = await client.read_flow_run(flow_run_id)
            artifacts = await client.read_artifacts(
                artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id]))
            )
            logs = await client.read_logs(
                log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id]))
            )
            return run, artifacts, logs

    run, artifacts, logs = asyncio.run(read())
    assert run.name == experiment
    by_key = {artifact.key: artifact for artifact in artifacts}
    assert {"mrmc-summary", "mrmc-audit"} <= set(by_key)
    assert "**Claims**:" in by_key["mrmc-summary"].data and "| `" in by_key["mrmc-summary"].data
    assert by_key["mrmc-audit"].data.startswith(f"# Audit: mrmc ({experiment})")
    messages = [log.message for log in logs]
    assert any(
        message.startswith("dvc exp run --temp mrmc-claims") and f"-n {experiment}" in message
        for message in messages
    )
    assert f"Reproducing experiment '{experiment}'" in messages
    # DVC's per-stage lines (run, skipped, or restored from the run cache of an earlier identical experiment)
    assert any(message.startswith(("Running stage 'mrmc-", "Stage 'mrmc-")) for message in messages)


def assert_the_form_says_what_each_param_is(schema: dict) -> None:
    """Distinct titles with the params key, the dataset as a choice, the budget range in the schema, and no
    `$ref` left for the UI to title by class name."""
    form = schema["properties"]["mrmc"]
    fields = form["properties"]
    assert "$ref" not in json.dumps(schema)
    assert (fields["trace"]["title"], fields["train"]["title"]) == ("Trace", "Train")
    assert fields["trace"]["description"].startswith("mrmc.trace: ")
    assert {"fashion_mnist", "mnist5k", "digits"} <= set(fields["dataset"]["enum"])
    assert fields["budgets"]["items"] == {"exclusiveMaximum": 1, "exclusiveMinimum": 0, "type": "number"}
    assert fields["budgets"]["uniqueItems"] is True
    assert "required" not in form  # a field left out keeps the workspace's params.yaml value


def open_custom_run(driver, base: str, deployment: str) -> None:
    """The deployment's page → Run → Custom run, as a user clicks through. The page is opened by its address:
    the deployments list shows ten per page, and with fourteen papers a paper can sit on the second."""
    from prefect.settings import PREFECT_API_URL, temporary_settings
    from selenium.webdriver.common.by import By

    with temporary_settings(updates={PREFECT_API_URL: f"{base}/api"}):
        found = read_deployment(f"{deployment}/{deployment}")
    driver.get(f"{base}/deployments/deployment/{found.id}")
    click_text(driver, "*", "Run")
    click_text(driver, "*", "Custom run")
    wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, ".schema-form-property"), 60, "the run form")


def refuse_a_budget_of_one_and_a_half(driver) -> str:
    """Type 1.5 as a budget and submit: the form marks the field, and no run is created."""
    from selenium.webdriver.common.by import By

    budgets = form_field(driver, "Budgets").find_elements(By.CSS_SELECTOR, "input[type=number]")
    type_into(driver, budgets[1], "1.5")
    click_text(driver, "*", "Submit")
    error = wait_for(
        lambda: form_field(driver, "Budgets").find_element(
            By.CSS_SELECTOR, ".schema-form-property-array-item__error"
        ),
        30,
        "the budget's error",
    ).text
    assert urllib.parse.urlparse(driver.current_url).path.endswith("/run")  # still on the form: no run
    type_into(driver, budgets[1], "0.3")  # back to the smoke budgets
    return error


def fill_and_submit(driver, experiment: str, uneven_ratio: float) -> None:
    """Name the experiment, change one claims threshold (only the claims stage reruns), submit."""
    from selenium.webdriver.common.by import By

    click_text(driver, "*", "str", within=form_field(driver, "Experiment name"))
    name_input = wait_for(
        lambda: form_field(driver, "Experiment name").find_element(By.CSS_SELECTOR, "input, textarea"),
        30,
        "the experiment name's text box",
    )
    type_into(driver, name_input, experiment)
    ratio = form_field(driver, "Uneven Ratio", within=form_field(driver, "Claims"))
    type_into(driver, ratio.find_element(By.TAG_NAME, "input"), str(uneven_ratio))
    click_text(driver, "*", "Submit")


def land_on_the_run(driver, experiment: str, timeout: float = 420) -> str:
    """Follow the toast's "View run" to the run and wait until it completes (the page updates itself); its
    page text."""
    click_text(driver, "*", "View run", timeout=60, last=True)
    wait_for(lambda: "/runs/flow-run/" in driver.current_url, 30, "the run page")

    def finished():
        text = page_text(driver)
        header = text.split("\nLogs\n")[0]  # the run's name and state badge, above its tabs
        if experiment in header and ("Completed" in header or "Failed" in header or "Crashed" in header):
            return text
        return None

    text = wait_for(finished, timeout, f"run {experiment} to finish", every=2)
    assert "Completed" in text.split("\nLogs\n")[0], text[:3000]
    return text


@pytest.mark.skipif(not browser_available(), reason=MISSING_BROWSER)
def test_a_browser_runs_the_form_and_lands_on_the_audit(served, served_workspace, tmp_path):
    port, _, _ = served
    base = f"http://127.0.0.1:{port}"
    driver = start_browser()
    try:
        open_custom_run(driver, base, "mrmc")
        form = page_text(driver)
        assert "mrmc params" in form and "mrmc.trace: How a classifier is trained." in form
        assert "mrmc.train: How a classifier is trained." in form
        error = refuse_a_budget_of_one_and_a_half(driver)
        assert error == "1.5 is greater than or equal to the maximum of 1"
        fill_and_submit(driver, "browser", 3.0)
        landing = land_on_the_run(driver, "browser")
        screenshot(driver, tmp_path / "landing-run.png")
        logs = wait_for(
            lambda: "Reproducing experiment" in page_text(driver) and page_text(driver), 60, "logs"
        )
        assert "dvc exp run --temp mrmc-claims -S mrmc.claims.uneven_ratio=3.0 -n browser" in logs
        assert "Reproducing experiment 'browser'" in logs
        click_text(driver, "*", "Artifacts")
        artifacts = wait_for(lambda: "mrmc-audit" in page_text(driver) and page_text(driver), 60, "artifacts")
        assert "mrmc-summary" in artifacts and "audit of experiment browser" in artifacts
        screenshot(driver, tmp_path / "landing-run-artifacts.png")
        click_text(driver, "*", "mrmc-audit")
        audit = wait_for(
            lambda: "Audit: mrmc (browser)" in page_text(driver) and page_text(driver), 60, "audit"
        )
        assert "mrmc.claims.uneven_ratio = 3.0" in audit
        screenshot(driver, tmp_path / "audit.png")
    finally:
        driver.quit()
    assert "browser" in landing
    assert audit_record("mrmc", "browser", served_workspace).params["claims"]["uneven_ratio"] == 3.0


def test_served_deployment_runs_an_override_as_an_experiment(served, served_workspace):
    from prefect.deployments import run_deployment
    from prefect.settings import PREFECT_API_URL, temporary_settings

    port, pids, serve_process = served
    workspace = served_workspace
    params = yaml.safe_load((workspace / "params.yaml").read_text())["mrmc"]
    params["claims"]["uneven_ratio"] = 2.5
    with temporary_settings(updates={PREFECT_API_URL: f"http://127.0.0.1:{port}/api"}):
        deployment = read_deployment("mrmc/mrmc")
        assert_the_form_says_what_each_param_is(deployment.parameter_openapi_schema)
        assert_cross_origin_refused(port)
        assert_workspace_not_a_parameter("all-papers/all-papers", workspace)
        assert_workspace_not_a_parameter("mrmc/mrmc", workspace)
        run = run_deployment(
            "mrmc/mrmc", parameters={"mrmc": params, "experiment_name": "served"}, timeout=600
        )
        assert run.state.is_completed(), run.state.message
        assert_landing_run_tells_the_story(run.id, "served")
        # what the schema can say is refused before a run exists, naming the key
        with pytest.raises(
            Exception, match=r"mrmc\.budgets\[1\].*1\.5 is greater than or equal to the maximum"
        ):
            run_deployment("mrmc/mrmc", parameters={"mrmc": {"budgets": [0.1, 1.5]}}, timeout=300)
        # a rule across fields fails the run at once, in one line naming the keys
        cross = {"claims": {**params["claims"], "cost_budget": 0.9}}
        failed = run_deployment("mrmc/mrmc", parameters={"mrmc": cross}, timeout=300)
        assert failed.state.is_failed(), failed.state
        message = failed.state.message.removeprefix("Flow run encountered an exception: ParamsError: ")
        assert message == (
            "run form: invalid params: mrmc: Value error, claims.cost_budget 0.9 is not one of mrmc.budgets"
        )
        assert failed.name.startswith("mrmc-")  # named like its experiment would be
    assert "served" in experiment_revs(workspace)
    record = audit_record("mrmc", "served", workspace)
    assert record.params["claims"]["uneven_ratio"] == 2.5
    assert record.metrics["data/mrmc/metrics.json"]

    subprocess.run(
        [sys.executable, "-m", "flows", "serve", "--stop", "--workspace", str(workspace)],
        env=subprocess_env(),
        check=True,
        capture_output=True,
    )
    serve_process.wait(timeout=60)  # `icml25 serve` exits once its children are stopped
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.killpg(pid, 0)
    assert not _port_open(port)
