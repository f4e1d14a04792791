"""Prefect's API app in a forked process (`flows.embedded_api`): it answers, it stops when told, and one that
cannot bind says so at once. Each check runs in a fresh interpreter, as `icml25 flow` does: the fork happens before
Prefect is imported, so no test process's Prefect settings or threads are inherited."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from stages.core.dvc_cli import subprocess_env

pytestmark = pytest.mark.integration

ANSWERS_AND_STOPS = """
    import json, httpx
    from flows.embedded_api import start_embedded_api
    api = start_embedded_api()
    up = api.wait(120)
    status = httpx.get(f"{api.url}/health", timeout=10).status_code if up else None
    api.stop()
    print(json.dumps({"up": up, "status": status, "alive": api.process.is_alive(), "code": api.process.exitcode}))
"""

CANNOT_BIND = """
    import json, socket, time
    from flows import embedded_api
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        embedded_api.free_port = lambda: taken.getsockname()[1]
        api = embedded_api.start_embedded_api()
        started = time.monotonic()
        up = api.wait(120)
        seconds = time.monotonic() - started
        api.stop()
    print(json.dumps({"up": up, "seconds": seconds, "alive": api.process.is_alive()}))
"""


def run_fresh(script: str, tmp_path) -> dict:
    env = {k: v for k, v in subprocess_env().items() if k != "PREFECT_API_URL"}
    env["PREFECT_HOME"] = str(tmp_path / "prefect-home")
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_forked_api_answers_and_stops_when_told(tmp_path):
    result = run_fresh(ANSWERS_AND_STOPS, tmp_path)
    assert result == {"up": True, "status": 200, "alive": False, "code": 0}
    assert (tmp_path / "prefect-home" / "prefect.db").is_file()  # PREFECT_HOME's database, as ephemeral mode


def test_forked_api_that_cannot_bind_reports_not_started(tmp_path):
    """A port taken between the probe and the bind: the forked server exits and `wait` says so at once (the flow
    then serves the API from a thread), instead of waiting for the start-up timeout."""
    result = run_fresh(CANNOT_BIND, tmp_path)
    assert result["up"] is False and result["alive"] is False
    assert result["seconds"] < 60
