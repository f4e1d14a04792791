"""`icml25 serve` settings and `--stop`: locked-down server, Dask on localhost, no signal to foreign pids."""

from __future__ import annotations

import json
import subprocess
import time

from flows import serve
from flows.experiment_flow import LOCAL_CLUSTER


def test_server_settings_turn_csrf_on_and_limit_cors_to_the_ui(monkeypatch):
    env = serve.server_env(4321, auth=None)
    assert env["PREFECT_SERVER_API_CSRF_PROTECTION_ENABLED"] == "true"
    assert env["PREFECT_SERVER_API_CORS_ALLOWED_ORIGINS"] == "http://127.0.0.1:4321,http://localhost:4321"
    assert "PREFECT_SERVER_API_AUTH_STRING" not in env


def test_an_auth_string_reaches_server_and_client(monkeypatch):
    monkeypatch.setenv(serve.AUTH_STRING_ENV, "admin:s3cret")
    auth = serve.auth_string()
    assert auth == "admin:s3cret"
    assert serve.server_env(4321, auth)["PREFECT_SERVER_API_AUTH_STRING"] == "admin:s3cret"
    assert serve.client_env(4321, auth)["PREFECT_API_AUTH_STRING"] == "admin:s3cret"


def test_authentication_is_on_by_default_with_a_fresh_secret(monkeypatch):
    monkeypatch.delenv(serve.AUTH_STRING_ENV, raising=False)
    first, second = serve.auth_string(), serve.auth_string()
    user, secret = first.split(":", 1)
    assert user == serve.GENERATED_USER and len(secret) >= 32
    assert first != second  # generated per start, never a fixed default
    assert serve.auth_string(enabled=False) is None
    assert first in serve.login_text(4321, first)  # printed for whoever started the server


def test_the_local_dask_cluster_listens_on_localhost_only():
    assert LOCAL_CLUSTER["host"] == "127.0.0.1"
    assert LOCAL_CLUSTER["dashboard_address"].startswith("127.0.0.1:")


def test_stop_with_a_stale_pid_file_signals_nothing(tmp_path):
    stranger = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        pid_file = tmp_path / serve.PID_FILE
        pid_file.parent.mkdir(parents=True)
        recorded = {"start": "1", "cmdline": "prefect server start"}  # what serve recorded, long ago
        pid_file.write_text(
            json.dumps({"pids": [stranger.pid], "port": 4200, "processes": {str(stranger.pid): recorded}})
        )
        assert serve.stop(tmp_path) is False
        assert stranger.poll() is None  # still running: not ours, not signalled
        assert not pid_file.exists()
    finally:
        stranger.kill()
        stranger.wait()


def test_a_process_is_ours_only_with_its_recorded_start_and_our_command():
    process = subprocess.Popen(["sleep", "30"])
    try:
        identity = serve.process_identity(process.pid)
        deadline = time.monotonic() + 5
        while identity is not None and not identity["cmdline"] and time.monotonic() < deadline:
            time.sleep(0.05)  # between fork and exec the command line is still empty
            identity = serve.process_identity(process.pid)
        assert identity is not None and "sleep" in identity["cmdline"]
        assert not serve.is_own_process(process.pid, identity)  # `sleep` is not one of our commands
        assert not serve.is_own_process(process.pid, None)
    finally:
        process.kill()
        process.wait()
