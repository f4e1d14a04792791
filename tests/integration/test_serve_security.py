"""The served Prefect server refuses a DNS-rebinding request (right Origin, foreign Host) even with valid
credentials, and refuses every API call without the auth string `icml25 serve` turns on by default."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request

import pytest

from flows import serve
from tests.conftest import free_port

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def secured_server(tmp_path_factory):
    """The server `icml25 serve` starts (trusted-host app, default authentication) on a free port."""
    workspace = tmp_path_factory.mktemp("secured")
    (workspace / ".dvc/tmp").mkdir(parents=True)
    port, auth = free_port(), serve.auth_string(enabled=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PREFECT_HOME", str(tmp_path_factory.mktemp("prefect-home")))
        process = serve.start_server(port, workspace, auth)
    try:
        serve.wait_for_server(port, process)
        yield port, auth
    finally:
        serve.stop_processes([process.pid])


def _call(url: str, headers: dict[str, str], data: bytes | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if data else "GET")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _basic(auth: str) -> str:
    return "Basic " + base64.b64encode(auth.encode()).decode()


def test_a_dns_rebinding_request_is_refused_even_with_credentials(secured_server):
    port, auth = secured_server
    url = f"http://127.0.0.1:{port}/api/csrf-token?client=rebinding-page"
    rebinding = {
        "Host": f"evil.example:{port}",
        "Origin": f"http://evil.example:{port}",
        "Authorization": _basic(auth),
    }
    status, body = _call(url, rebinding)
    assert status == 400 and b"Invalid host header" in body
    status, _ = _call(f"http://127.0.0.1:{port}/api/deployments/filter", rebinding, data=b"{}")
    assert status == 400
    # the same request under the served address gets its token: only the Host header made the difference
    own = {**rebinding, "Host": f"127.0.0.1:{port}", "Origin": f"http://127.0.0.1:{port}"}
    status, body = _call(url, own)
    assert status == 200 and json.loads(body)["token"]


def test_the_api_needs_the_auth_string(secured_server):
    port, auth = secured_server
    url = f"http://127.0.0.1:{port}/api/deployments/filter"
    client = "security-test"
    tokens = {"Authorization": _basic(auth)}
    status, body = _call(f"http://127.0.0.1:{port}/api/csrf-token?client={client}", tokens)
    assert status == 200
    csrf = {"Prefect-Csrf-Token": json.loads(body)["token"], "Prefect-Csrf-Client": client}
    json_body = {"Content-Type": "application/json"}
    assert _call(url, {**json_body, **csrf}, data=b"{}")[0] == 401  # no credentials
    wrong = {**json_body, **csrf, "Authorization": _basic("icml25:guess")}
    assert _call(url, wrong, data=b"{}")[0] == 401
    status, body = _call(url, {**json_body, **csrf, **tokens}, data=b"{}")
    assert status == 200 and json.loads(body) == []
