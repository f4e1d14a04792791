"""The smoke profile: every pipeline end to end through `dvc repro` at tiny sizes, in a scratch copy.

The scratch copy holds the repository's files (tracked and untracked-but-not-ignored, no data), its own git
repository and DVC cache, and `params.yaml` merged with `params.smoke.yaml`. The workspace's results, lock
file and cache are never touched.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from stages.core.dvc_cli import run_dvc
from stages.core.params import PARAMS_FILE, deep_merge, read_params_file, write_params_file

SMOKE_PARAMS_FILE = "params.smoke.yaml"
_EXCLUDED_TOP = {"data", "reports", ".venv", ".dvc-remote"}


def workspace_files(root: Path) -> list[Path]:
    """Files git would carry (tracked + untracked not ignored), minus data and environments."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=root, capture_output=True, check=True
        )
        .stdout.decode()
        .split("\0")
    )
    files = [Path(name) for name in listed if name]
    return [name for name in files if name.parts[0] not in _EXCLUDED_TOP and (root / name).is_file()]


GIT = ["git", "-c", "user.name=icml25", "-c", "user.email=icml25@localhost", "-c", "init.defaultBranch=main"]


def commit_all(workspace: str | Path, message: str) -> None:
    """Commit everything in a scratch workspace (DVC experiments start from a commit)."""
    subprocess.run([*GIT, "add", "-A"], cwd=workspace, check=True, capture_output=True)
    subprocess.run(
        [*GIT, "commit", "-q", "--allow-empty", "-m", message], cwd=workspace, check=True, capture_output=True
    )


def scratch_copy(root: str | Path, destination: str | Path) -> Path:
    """Copy the workspace's files into `destination` and commit them to a fresh git repository there."""
    root, destination = Path(root).resolve(), Path(destination)
    destination.mkdir(parents=True, exist_ok=True)
    for name in workspace_files(root):
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, target)
    subprocess.run([*GIT, "init", "-q"], cwd=destination, check=True, capture_output=True)
    commit_all(destination, "scratch copy")
    return destination


def apply_smoke_params(workspace: Path) -> None:
    """Overwrite the scratch copy's params.yaml with params.yaml ⊕ params.smoke.yaml."""
    merged = deep_merge(
        read_params_file(workspace / PARAMS_FILE), read_params_file(workspace / SMOKE_PARAMS_FILE)
    )
    write_params_file(merged, workspace / PARAMS_FILE)


def run_smoke(targets: Sequence[str] = (), workdir: str | Path | None = None, root: str | Path = ".") -> Path:
    """Make a scratch copy with smoke params and `dvc repro` the targets (all stages by default)."""
    workspace = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="icml25-smoke-"))
    scratch_copy(root, workspace)
    apply_smoke_params(workspace)
    # The copied lock records the full-size runs, which smoke params replace stage by stage anyway (the scratch
    # copy has no outputs or cache). DVC rewrites the whole lock after every stage: starting from none, a
    # stage's bookkeeping is ~3 s shorter (one forced stage: 10.5-14.7 s with the 15k-line lock, 7.8 s with 2k).
    (workspace / "dvc.lock").unlink(missing_ok=True)
    run_dvc(["repro", *targets], workspace)
    return workspace
