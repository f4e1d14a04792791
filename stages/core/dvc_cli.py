"""Running DVC as a subprocess, offline, one writer per workspace at a time.

Both the smoke profile and the Prefect flows call DVC through here, so `dvc.lock` and the DVC cache stay
the record of what ran.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
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
    args: Sequence[str], workspace: str | Path, capture: bool = False, lock: bool = True
) -> subprocess.CompletedProcess:
    """Run `dvc ARGS` in `workspace`; a failure raises with DVC's own message.

    `lock` holds the workspace lock for commands that write the workspace (repro); read-only commands and
    temporary experiments, which run in their own copy, pass `lock=False` and may run side by side: they wait
    for DVC's own short repository lock (`--wait-for-lock`) instead of failing when a neighbour holds it.
    """
    command = [dvc_executable(), *([] if lock else ["--wait-for-lock"]), *args]
    with workspace_lock(workspace) if lock else contextlib.nullcontext():
        completed = subprocess.run(
            command,
            cwd=workspace,
            env=subprocess_env(),
            text=True,
            capture_output=capture,
            check=False,
        )
    if completed.returncode != 0:
        detail = (completed.stderr or "").strip()[-4000:] if capture else "(see the output above)"
        raise PipelineError(
            f"`dvc {' '.join(args)}` failed in {workspace} (exit {completed.returncode}):\n{detail}"
        )
    return completed
