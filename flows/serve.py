"""`icml25 serve`: a Prefect server on 127.0.0.1 plus one deployment per paper and an all-papers deployment.

Both run as child processes in their own process groups; Ctrl-C (or `icml25 serve --stop`, which reads the
pid file) stops them and everything they started.
"""

import json
import os
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


def start_server(port: int, workspace: Path) -> subprocess.Popen:
    """`prefect server start` on 127.0.0.1:port, in its own process group."""
    log = open(workspace / ".dvc/tmp/prefect-server.log", "w")  # noqa: SIM115 - lives as long as the server
    return subprocess.Popen(
        [
            str(Path(sys.executable).parent / "prefect"),
            "server",
            "start",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        cwd=workspace,
        env=subprocess_env(),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def start_deployments(port: int, workspace: Path) -> subprocess.Popen:
    """Serve the deployments against the server, in its own process group."""
    env = {**subprocess_env(), "PREFECT_API_URL": api_url(port), "ICML25_WORKSPACE": str(workspace)}
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


def serve(port: int = 4200, workspace: str | Path = ".") -> None:
    """Start server + deployments, write the pid file, and stay until Ctrl-C or `--stop`."""
    workspace = Path(workspace).resolve()
    (workspace / ".dvc/tmp").mkdir(parents=True, exist_ok=True)
    server = start_server(port, workspace)
    children = [server.pid]
    try:
        wait_for_server(port, server)
        deployments = start_deployments(port, workspace)
        children.append(deployments.pid)
        (workspace / PID_FILE).write_text(json.dumps({"pids": children, "port": port}))
        print(
            f"Prefect UI: http://127.0.0.1:{port}  (deployments: one per paper + all-papers; Ctrl-C to stop)"
        )
        while server.poll() is None and deployments.poll() is None:
            time.sleep(1.0)
    except KeyboardInterrupt:
        pass
    finally:
        stop_processes(children)
        (workspace / PID_FILE).unlink(missing_ok=True)


def stop(workspace: str | Path = ".") -> bool:
    """Stop a running `icml25 serve` of this workspace (from its pid file); False if none was running."""
    pid_file = Path(workspace) / PID_FILE
    if not pid_file.is_file():
        return False
    stop_processes(json.loads(pid_file.read_text())["pids"])
    pid_file.unlink(missing_ok=True)
    return True


def serve_deployments(workspace: str) -> None:
    """Register and serve every deployment (runs in the child process started by `serve`)."""
    from prefect import serve as prefect_serve
    from prefect.types.entrypoint import EntrypointType

    from flows.deployments import PAPER_FLOWS
    from flows.experiment_flow import all_papers_flow

    deployments = [
        paper_flow.to_deployment(name=paper, entrypoint_type=EntrypointType.MODULE_PATH)
        for paper, paper_flow in PAPER_FLOWS.items()
    ]
    deployments.append(all_papers_flow.to_deployment(name="all-papers", parameters={"workspace": workspace}))
    prefect_serve(*deployments, print_starting_message=True)


if __name__ == "__main__":
    serve_deployments(os.environ.get("ICML25_WORKSPACE", "."))
