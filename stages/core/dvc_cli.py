"""Running DVC as a subprocess, offline, one writer per workspace at a time.

Both the smoke profile and the Prefect flows call DVC through here, so `dvc.lock` and the DVC cache stay
the record of what ran.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from filelock import FileLock

from stages.core.errors import PipelineError

OFFLINE_ENV = {
    "DVC_NO_ANALYTICS": "1",
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "HF_HUB_OFFLINE": "1",
    "GX_ANALYTICS_ENABLED": "false",
}
WORKSPACE_LOCK = ".dvc/tmp/icml25-workspace.lock"


def subprocess_env() -> dict[str, str]:
    """This environment plus the offline settings, with this interpreter's folder first on PATH so the
    `python -m stages` commands in dvc.yaml run in the same virtual environment."""
    env = {**os.environ, **OFFLINE_ENV}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def dvc_executable() -> str:
    """The `dvc` next to this interpreter, else the one on PATH."""
    beside = Path(sys.executable).parent / "dvc"
    found = str(beside) if beside.exists() else shutil.which("dvc")
    if not found:
        raise PipelineError("dvc is not installed in this environment: run `make setup`")
    return found


def workspace_lock(workspace: str | Path) -> FileLock:
    """A lock so that DVC writes to one workspace take turns (DVC itself refuses concurrent repro)."""
    path = Path(workspace) / WORKSPACE_LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path))


def run_dvc(
    args: Sequence[str],
    workspace: str | Path,
    capture: bool = False,
    lock: bool = True,
    on_line: Callable[[str], None] | None = None,
) -> subprocess.CompletedProcess:
    """Run `dvc ARGS` in `workspace`; a failure raises with DVC's own message.

    `lock` holds the workspace lock for commands that write the workspace (repro); read-only commands and
    temporary experiments, which run in their own copy, pass `lock=False` and may run side by side: they wait
    for DVC's own short repository lock (`--wait-for-lock`) instead of failing when a neighbour holds it.
    `on_line` receives each output line (stdout and stderr merged) as it is printed; the output is captured too.
    """
    command = [dvc_executable(), *([] if lock else ["--wait-for-lock"]), *args]
    with workspace_lock(workspace) if lock else contextlib.nullcontext():
        if on_line is not None:
            completed = _run_streaming(command, workspace, on_line)
        else:
            completed = subprocess.run(
                command,
                cwd=workspace,
                env=subprocess_env(),
                text=True,
                capture_output=capture,
                check=False,
            )
    if completed.returncode != 0:
        captured = capture or on_line is not None
        detail = (
            (completed.stderr or completed.stdout or "").strip()[-4000:]
            if captured
            else "(see the output above)"
        )
        raise PipelineError(
            f"`dvc {' '.join(args)}` failed in {workspace} (exit {completed.returncode}):\n{detail}"
        )
    return completed


def _run_streaming(
    command: list[str], workspace: str | Path, on_line: Callable[[str], None]
) -> subprocess.CompletedProcess:
    """Run `command`, handing each line to `on_line` as it arrives (a progress bar's redraws, which end in a
    carriage return, count as lines); returns the whole output as stdout."""
    process = subprocess.Popen(
        command, cwd=workspace, env=subprocess_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert process.stdout is not None
    output, pending = [], b""
    while chunk := process.stdout.read1(65536):
        pending += chunk
        *lines, pending = re.split(rb"\r\n|\r|\n", pending)
        for raw in lines:
            line = raw.decode(errors="replace")
            output.append(line)
            on_line(line)
    if pending:
        output.append(pending.decode(errors="replace"))
        on_line(output[-1])
    return subprocess.CompletedProcess(command, process.wait(), "\n".join(output), "")
