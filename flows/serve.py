"""`icml25 serve`: a Prefect server on 127.0.0.1 plus one deployment per paper and an all-papers deployment.

Both run as child processes in their own process groups; Ctrl-C (or `icml25 serve --stop`, which reads the
pid file and signals only processes it can prove it started) stops them and everything they started.

The server is locked down: it answers only requests whose Host is the address it serves (`flows.server_app`:
a DNS-rebinding page is refused), CSRF protection is on, CORS is limited to the UI's own origin, and every
client must send an auth string (`user:password`): `$ICML25_API_AUTH_STRING` if set, else one generated per
start and printed (the UI asks for it). `--no-auth` turns that off for a machine with no other users. No
deployment takes a folder as a parameter: runs always use the served workspace.
"""

import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from stages.core.dvc_cli import subprocess_env
from stages.core.errors import PipelineError

PID_FILE = ".dvc/tmp/icml25-serve.json"
SERVE_DEPLOYMENTS = [sys.executable, "-m", "flows.serve"]
SERVER = [sys.executable, "-m", "flows.server_app"]
AUTH_STRING_ENV = "ICML25_API_AUTH_STRING"
GENERATED_USER = "icml25"
# What a process of ours has in its command line: the pid file is trusted only for processes that match.
OWN_COMMANDS = ("flows.server_app", "flows.serve")


def api_url(port: int) -> str:
    """The Prefect API URL of a server on this port."""
    return f"http://127.0.0.1:{port}/api"


def wait_for_server(port: int, process: subprocess.Popen, timeout: float = 120.0) -> None:
    """Block until the server answers /health (or fail with its exit status)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise PipelineError(
                f"prefect server exited with status {process.returncode} (port {port} in use?)"
            )
        try:
            with urllib.request.urlopen(f"{api_url(port)}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise PipelineError(f"prefect server did not answer on port {port} within {timeout:.0f}s")


def ui_origins(port: int) -> str:
    """The browser origins of the UI itself: the only ones CORS lets call the API."""
    return f"http://127.0.0.1:{port},http://localhost:{port}"


def auth_string(enabled: bool = True) -> str | None:
    """The auth string every client must send: `$ICML25_API_AUTH_STRING`, else a fresh random one; None when
    authentication is turned off."""
    if not enabled:
        return None
    return os.environ.get(AUTH_STRING_ENV) or f"{GENERATED_USER}:{secrets.token_urlsafe(24)}"


def server_env(port: int, auth: str | None = None) -> dict[str, str]:
    """The server's settings: CSRF on, CORS limited to the UI's origin, the auth string if any."""
    env = {
        **subprocess_env(),
        "PREFECT_SERVER_API_CSRF_PROTECTION_ENABLED": "true",
        "PREFECT_SERVER_API_CORS_ALLOWED_ORIGINS": ui_origins(port),
        # the UI's pages call this URL; left alone it follows the *default* port (4200), not `--port`
        "PREFECT_UI_API_URL": api_url(port),
    }
    if auth:
        env["PREFECT_SERVER_API_AUTH_STRING"] = auth
    return env


def client_env(port: int, auth: str | None = None) -> dict[str, str]:
    """Settings for a client of the served API (the deployments process): its URL and the auth string."""
    env = {**subprocess_env(), "PREFECT_API_URL": api_url(port)}
    if auth:
        env["PREFECT_API_AUTH_STRING"] = auth
    return env


def start_server(port: int, workspace: Path, auth: str | None = None) -> subprocess.Popen:
    """Prefect's server behind the trusted-host check on 127.0.0.1:port, in its own process group."""
    log = open(workspace / ".dvc/tmp/prefect-server.log", "w")  # noqa: SIM115 - lives as long as the server
    return subprocess.Popen(
        [*SERVER, "--port", str(port)],
        cwd=workspace,
        env=server_env(port, auth),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def start_deployments(port: int, workspace: Path, auth: str | None = None) -> subprocess.Popen:
    """Serve the deployments against the server, in its own process group."""
    env = {**client_env(port, auth), "ICML25_WORKSPACE": str(workspace)}
    log = open(workspace / ".dvc/tmp/prefect-serve.log", "w")  # noqa: SIM115
    return subprocess.Popen(
        SERVE_DEPLOYMENTS,
        cwd=workspace,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def stop_processes(pids: list[int]) -> None:
    """SIGTERM each process group, then SIGKILL what is left after 10 s."""
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 0.0)):
        for pid in pids:
            try:
                os.killpg(pid, sig)
            except ProcessLookupError:
                continue
        deadline = time.monotonic() + wait
        while wait and time.monotonic() < deadline and any(_alive(pid) for pid in pids):
            time.sleep(0.2)


def _alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    return True


def process_identity(pid: int) -> dict[str, str] | None:
    """The start time (clock ticks since boot) and command line of a running process, or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    start_ticks = stat.rsplit(")", 1)[1].split()[19]  # field 22 of proc(5), counted after the command name
    return {"start": start_ticks, "cmdline": cmdline.strip()}


def is_own_process(pid: int, recorded: dict[str, str] | None) -> bool:
    """True only if `pid` is still the process recorded at start (same start time) and runs our command."""
    current = process_identity(pid)
    if current is None or recorded is None:
        return False
    return current["start"] == recorded["start"] and any(
        command in current["cmdline"] for command in OWN_COMMANDS
    )


def login_text(port: int, auth: str | None) -> str:
    """What `serve` prints about logging in (the auth string itself: whoever started the server needs it)."""
    if auth is None:
        return "authentication is off (--no-auth): any local user can use the API"
    return (
        f"login (the UI asks for it): {auth}\n"
        f"  API clients: PREFECT_API_URL={api_url(port)} PREFECT_API_AUTH_STRING='{auth}'"
    )


def serve(port: int = 4200, workspace: str | Path = ".", authenticate: bool = True) -> None:
    """Start server + deployments, write the pid file, and stay until Ctrl-C or `--stop`."""
    workspace = Path(workspace).resolve()
    (workspace / ".dvc/tmp").mkdir(parents=True, exist_ok=True)
    auth = auth_string(authenticate)
    server = start_server(port, workspace, auth)
    children = [server.pid]
    try:
        wait_for_server(port, server)
        deployments = start_deployments(port, workspace, auth)
        children.append(deployments.pid)
        identities = {str(pid): process_identity(pid) for pid in children}
        (workspace / PID_FILE).write_text(
            json.dumps({"pids": children, "port": port, "processes": identities})
        )
        print(
            f"Prefect UI: http://127.0.0.1:{port}  (deployments: one per paper + all-papers; Ctrl-C to stop)"
        )
        print(login_text(port, auth), flush=True)
        while server.poll() is None and deployments.poll() is None:
            time.sleep(1.0)
    except KeyboardInterrupt:
        pass
    finally:
        stop_processes(children)
        (workspace / PID_FILE).unlink(missing_ok=True)


def stop(workspace: str | Path = ".") -> bool:
    """Stop a running `icml25 serve` of this workspace (from its pid file); False if none was running.

    A pid is signalled only if it is still the process `serve` started (same start time, our command): a
    stale pid file whose pids were reused by other programs signals nothing.
    """
    pid_file = Path(workspace) / PID_FILE
    if not pid_file.is_file():
        return False
    record = json.loads(pid_file.read_text())
    identities = record.get("processes", {})
    own = [pid for pid in record["pids"] if is_own_process(pid, identities.get(str(pid)))]
    stale = sorted(set(record["pids"]) - set(own))
    if stale:
        print(f"not signalling {stale}: no longer the processes `icml25 serve` started (stale pid file)")
    stop_processes(own)
    pid_file.unlink(missing_ok=True)
    return bool(own)


def serve_deployments() -> None:
    """Register and serve every deployment (runs in the child process started by `serve`, whose
    `$ICML25_WORKSPACE` is the only folder the deployments run in)."""
    from prefect import serve as prefect_serve
    from prefect.types.entrypoint import EntrypointType

    from flows.deployments import PAPER_FLOWS, run_all_papers_served
    from flows.experiment_flow import form_deployment

    deployments = [
        form_deployment(paper_flow, paper, name=paper, entrypoint_type=EntrypointType.MODULE_PATH)
        for paper, paper_flow in PAPER_FLOWS.items()
    ]
    deployments.append(
        run_all_papers_served.to_deployment(name="all-papers", entrypoint_type=EntrypointType.MODULE_PATH)
    )
    prefect_serve(*deployments, print_starting_message=True)


if __name__ == "__main__":
    serve_deployments()
