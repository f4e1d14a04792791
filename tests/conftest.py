"""Shared fixtures: tiny tables, the repository root, and one smoke run shared by the integration tests."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from stages.core.dvc_cli import OFFLINE_ENV
from stages.datasets.classification import from_arrays

REPO_ROOT = Path(__file__).resolve().parent.parent
os.environ.update(OFFLINE_ENV)
os.environ.setdefault("ICML25_PROGRESS", "0")
if os.environ.get("PYTEST_XDIST_WORKER"):  # workers never share a Prefect database
    os.environ.setdefault(
        "PREFECT_HOME",
        str(Path(tempfile.gettempdir()) / f"icml25-tests-prefect-{os.environ['PYTEST_XDIST_WORKER']}"),
    )


SHARED_RUN_FIXTURES = ("smoke_workspace", "committed_smoke_workspace")


@functools.cache
def _uses_the_shared_run(module: str) -> bool:
    path = REPO_ROOT / module
    return path.is_file() and any(name in path.read_text() for name in SHARED_RUN_FIXTURES)


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """`make test` runs `pytest -n 2 --dist loadgroup`; here that means: every module whose tests use the shared
    smoke run goes to one worker as one unit (the run is made once, and its tests never edit it side by side),
    every other module goes whole to a worker (module fixtures are built once). xdist's own loadgroup cannot be
    used: it tags node ids, which pytest 9 no longer lets a plugin rewrite."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SharedRunScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return "shared-smoke-run" if _uses_the_shared_run(module) else module

    return SharedRunScheduling(config, log)


@pytest.fixture
def repo_root() -> Path:
    """The repository under test."""
    return REPO_ROOT


def blobs_table(
    n_per_class: int = 30, n_classes: int = 3, n_features: int = 5, seed: int = 0
) -> pl.DataFrame:
    """A small classification table of separable Gaussian blobs, 20% of each class in test."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 4, size=(n_classes, n_features))
    labels = np.repeat(np.arange(n_classes), n_per_class)
    features = (centers[labels] + rng.normal(size=(len(labels), n_features))).astype(np.float32)
    splits = np.where(np.arange(len(labels)) % 5 == 0, "test", "train")
    return from_arrays(features, labels, splits)


@pytest.fixture
def tiny_table() -> pl.DataFrame:
    """90 rows, 3 classes, 5 features."""
    return blobs_table()


def run_cli(
    args: list[str], cwd: Path, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run `python -m flows ARGS` (the `icml25` command) as a user would."""
    env = {**os.environ, **OFFLINE_ENV, "ICML25_PROGRESS": "0", **(extra_env or {})}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")])  # this checkout's code
    return subprocess.run(
        [sys.executable, "-m", "flows", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


@pytest.fixture(scope="session")
def smoke_workspace(tmp_path_factory) -> Path:
    """A scratch copy of the repo where every pipeline ran end to end at smoke sizes through `dvc repro`."""
    from stages.smoke import run_smoke

    return run_smoke(workdir=tmp_path_factory.mktemp("smoke") / "ws", root=REPO_ROOT)


@pytest.fixture(scope="session")
def committed_smoke_workspace(smoke_workspace) -> Path:
    """The smoke workspace with its smoke params and dvc.lock committed: a baseline for experiments."""
    from stages.smoke import commit_all

    commit_all(smoke_workspace, "smoke baseline")
    return smoke_workspace
