"""Read-only git queries on a workspace (commit, status, files at a revision, refs)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from stages.core.errors import PipelineError


def git_output(workspace: str | Path, *args: str) -> str:
    """stdout of `git <args>` run in `workspace`; a failure raises naming the command and git's message."""
    completed = subprocess.run(["git", *args], cwd=workspace, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise PipelineError(f"git {' '.join(args)} failed in {workspace}: {completed.stderr.strip()}")
    return completed.stdout
