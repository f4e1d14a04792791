"""The interpreter check every `python -m stages` command runs first (standard library only).

`dvc.yaml` runs `python -m stages stage <name>`: DVC takes `python` from PATH, so `.venv/bin/dvc repro` without
an activated environment would run the stages on whichever Python comes first. When the workspace has the
project's `.venv` and this interpreter is not that one, stop at once and say how to run it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

PROJECT_VENV = ".venv"


def wrong_interpreter(workspace: Path, prefix: str = sys.prefix) -> str | None:
    """The message to stop with, or None when this interpreter is the workspace's own (or there is none)."""
    venv = workspace / PROJECT_VENV
    if not (venv / "bin" / "python").exists():
        return None
    if Path(prefix).resolve() == venv.resolve():
        return None
    return (
        f"this command runs on {sys.executable}, not the project's environment {venv}: "
        f"run `source {PROJECT_VENV}/bin/activate` first (or `make repro`), then rerun the command"
    )


def require_project_interpreter() -> None:
    """Exit with status 2 and the message when the interpreter is not the workspace's `.venv`."""
    message = wrong_interpreter(Path(os.getcwd()))
    if message and not os.environ.get("ICML25_ANY_INTERPRETER"):
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2)
