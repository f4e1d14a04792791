"""Shared fixtures: tiny tables, the repository root, and one smoke run shared by the integration tests."""

from __future__ import annotations

import functools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from filelock import FileLock

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


SHARED_RUN_FIXTURES = ("smoke_workspace",)
LONG_MODULES = tuple(
    f"tests/integration/test_{name}.py"
    for name in ("serve", "experiments", "multi_machine", "flow", "failures", "kernel_pin")
)
"""Modules of one to four minutes each (fresh-clone run, 2026-12-06), longest first: they go out right after
the shared run, so they run while it is built, and the short modules fill both workers at the end."""
REBUILD_MODULE = "tests/integration/test_rebuild_identical.py"


@functools.cache
def _uses_the_shared_run(module: str) -> bool:
    path = REPO_ROOT / module
    return path.is_file() and any(name in path.read_text() for name in SHARED_RUN_FIXTURES)


def _scope(nodeid: str) -> str:
    module = nodeid.split("::", 1)[0]
    return "shared-smoke-run" if _uses_the_shared_run(module) else module


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """`make test` runs `pytest -n 2 --dist loadgroup`; here that means: every module whose tests use the shared
    smoke run goes to one worker as one unit (the run is made once, and its tests never edit it side by side),
    every other module goes whole to a worker (module fixtures are built once). The shared run goes out first
    (and, when slow tests run, the independent rebuild of it second, so the two builds start together); the
    modules that take minutes follow (`LONG_MODULES`), then the rest, largest first. The tests that run MRMC
    experiments use their own MRMC-only baseline (`mrmc_baseline`), not the shared run, so they need not wait
    for it. xdist's own loadgroup cannot be used: it tags node ids, which pytest 9 no longer lets a plugin
    rewrite."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SharedRunScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _scope(nodeid)

    config.option.loadscopereorder = False  # scopes go out in collection order, set below
    return SharedRunScheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `--dist loadgroup`, order tests by scope: the shared run, the rebuild, the long modules, then the
    other scopes by size (largest first). Every worker collects in this order, so the scheduler hands the
    builds out first."""
    # xdist workers see `dist` as "no" and carry the controller's choice in `option.loadgroup`
    if config.getvalue("dist") != "loadgroup" and not getattr(config.option, "loadgroup", False):
        return
    sizes: dict[str, int] = {}
    for item in items:
        sizes[_scope(item.nodeid)] = sizes.get(_scope(item.nodeid), 0) + 1
    first = ("shared-smoke-run", REBUILD_MODULE, *LONG_MODULES)

    def rank(item: pytest.Item) -> tuple[int, int, str]:
        scope = _scope(item.nodeid)
        return (first.index(scope) if scope in first else len(first), -sizes[scope], scope)

    items.sort(key=rank)  # stable: tests keep their order within a scope


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


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (for a server a test starts)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _built_once(tmp_path_factory, name: str, build: Callable[[Path], None]) -> Path:
    """`build(folder)` once per test session, whichever xdist worker asks first; the others wait and reuse it.

    A failed build is recorded, so the other workers fail at once instead of building it again."""
    shared_root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared_root = shared_root.parent  # the session's folder above every worker's own
    folder, record = shared_root / name, shared_root / f"{name}.built"
    with FileLock(str(shared_root / f"{name}.lock")):
        if not record.exists():
            shutil.rmtree(folder, ignore_errors=True)
            try:
                build(folder)
            except BaseException as error:
                record.write_text(f"failed: {type(error).__name__}: {error}")
                raise
            record.write_text("ok")
    outcome = record.read_text()
    if outcome != "ok":
        pytest.fail(f"the shared build {name!r} failed in another worker: {outcome}")
    return folder


def locked_out_md5s(workspace: Path) -> dict[str, str]:
    """Every output path in the workspace's dvc.lock with its md5."""
    lock = yaml.safe_load((workspace / "dvc.lock").read_text())["stages"]
    return {out["path"]: out["md5"] for entry in lock.values() for out in entry.get("outs", [])}


def output_file_md5s(workspace: Path, outputs: list[str]) -> dict[str, str]:
    """The md5 of every file of the given outputs (a directory output file by file), by relative path."""
    from stages.core.io import file_md5

    found = {}
    for output in outputs:
        path = workspace / output
        files = sorted(f for f in path.rglob("*") if f.is_file()) if path.is_dir() else [path]
        found |= {str(file.relative_to(workspace)): file_md5(file) for file in files if file.is_file()}
    return found


def _smoke_build(workspace: Path) -> None:
    from stages.platform.smoke import commit_all, run_smoke

    run_smoke(workdir=workspace, root=REPO_ROOT)
    commit_all(workspace, "smoke baseline")  # smoke params and lock, as a user would commit them
    # what the run produced, before any test touches the workspace: the rebuild is compared against this
    outputs = locked_out_md5s(workspace)
    (workspace.parent / f"{workspace.name}-md5s.json").write_text(json.dumps(outputs))
    files = output_file_md5s(workspace, list(outputs))
    (workspace.parent / f"{workspace.name}-files.json").write_text(json.dumps(files))


def stage_commands(workspace: Path) -> list[tuple[str, str]]:
    """(name, cmd) of every stage of the workspace's dvc.yaml, upstream first (DVC's own graph)."""
    import networkx as nx
    from dvc.repo import Repo

    with Repo(str(workspace)) as repo:
        graph = repo.index.graph  # edges point from a stage to the stages it depends on
        return [(stage.name, stage.cmd) for stage in reversed(list(nx.topological_sort(graph)))]


# What another machine's libraries would pick by themselves (here: an older CPU's kernels in every library);
# `stages/platform/kernels.py` pins them back, so a run under these settings must still give the same bytes.
OTHER_MACHINE_KERNELS = {
    "ATEN_CPU_CAPABILITY": "default",
    "ONEDNN_MAX_CPU_ISA": "SSE41",
    "MKL_CBWR": "COMPATIBLE",
    "OPENBLAS_CORETYPE": "Sandybridge",
    "NPY_DISABLE_CPU_FEATURES": "X86_V3",
}


def _direct_build(workspace: Path) -> None:
    """The smoke run's stage commands, run in DAG order in a fresh scratch copy without DVC: the same code
    paths as `dvc repro` (which runs each `cmd` in the workspace) minus DVC's per-stage bookkeeping, which
    rewrites the whole dvc.lock after every stage. It runs as if on another machine (`OTHER_MACHINE_KERNELS`)."""
    from stages.core.dvc_cli import subprocess_env
    from stages.platform.smoke import apply_smoke_params, scratch_copy

    scratch_copy(REPO_ROOT, workspace)
    apply_smoke_params(workspace)
    env = {**subprocess_env(), **OTHER_MACHINE_KERNELS}
    for name, command in stage_commands(workspace):
        done = subprocess.run(command, shell=True, cwd=workspace, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"stage {name} failed in the direct rebuild:\n{done.stderr[-3000:]}")


def _mrmc_selected_build(workspace: Path) -> None:
    from stages.platform.smoke import run_smoke

    run_smoke(["mrmc-select"], workdir=workspace, root=REPO_ROOT)


def mrmc_selected_copy(tmp_path_factory, destination: Path) -> Path:
    """A copy at `destination` of a smoke-params workspace where MRMC ran through `dvc repro mrmc-select` (its
    data, trace and core-sets, with lock and cache), built once per test session. The tests that break, gate or
    orchestrate MRMC's stages start there instead of each running its first stages again."""
    built = _built_once(tmp_path_factory, "mrmc-selected", _mrmc_selected_build)
    return Path(shutil.copytree(built, destination, symlinks=True))


@pytest.fixture
def mrmc_selected(tmp_path_factory, tmp_path) -> Path:
    """This test's own copy of the MRMC workspace run up to `mrmc-select` (`mrmc_selected_copy`)."""
    return mrmc_selected_copy(tmp_path_factory, tmp_path / "ws")


@pytest.fixture(scope="session")
def mrmc_baseline(tmp_path_factory) -> Path:
    """A smoke-params workspace where MRMC's whole pipeline ran (`dvc repro mrmc-claims`), committed with its
    params and lock ("smoke baseline"): what the experiment, serving and multi-machine tests start from. Built
    once; copy or clone it, never edit it. Only MRMC: a temporary experiment copies the workspace, and one
    holding every paper's outputs made each `dvc exp run` ~13 s slower."""
    from stages.core.dvc_cli import run_dvc
    from stages.platform.smoke import commit_all

    def build(folder: Path) -> None:
        mrmc_selected_copy(tmp_path_factory, folder)
        run_dvc(["repro", "mrmc-claims"], folder, capture=True)
        commit_all(folder, "smoke baseline")

    return _built_once(tmp_path_factory, "mrmc-baseline", build)


@pytest.fixture(scope="session")
def smoke_workspace(tmp_path_factory) -> Path:
    """A scratch copy of the repo where every pipeline ran end to end at smoke sizes through `dvc repro`."""
    return _built_once(tmp_path_factory, "smoke", _smoke_build)


@pytest.fixture(scope="session")
def smoke_rebuild(tmp_path_factory) -> Path:
    """A second run of every smoke stage from scratch in another folder, without DVC, with another machine's
    kernel choices in its environment (another worker builds it while the first is made)."""
    return _built_once(tmp_path_factory, "smoke-rebuild", _direct_build)


@pytest.fixture(scope="session")
def smoke_run_md5s(tmp_path_factory) -> dict[str, str]:
    """The output md5s (dvc.lock) of the shared smoke run as it was built (waits for it, or builds it)."""
    workspace = _built_once(tmp_path_factory, "smoke", _smoke_build)
    return json.loads((workspace.parent / f"{workspace.name}-md5s.json").read_text())


@pytest.fixture(scope="session")
def smoke_run_files(tmp_path_factory) -> dict[str, str]:
    """The md5 of every output file of the shared smoke run as it was built."""
    workspace = _built_once(tmp_path_factory, "smoke", _smoke_build)
    return json.loads((workspace.parent / f"{workspace.name}-files.json").read_text())


def clone_with_outputs(origin: Path, destination: Path, *targets: str) -> Path:
    """A git clone of `origin` with the outputs of `targets` and their upstream stages pulled from the origin's
    DVC cache (a DVC cache folder is laid out as a DVC remote), as a colleague's machine would have them."""
    from stages.core.dvc_cli import run_dvc

    subprocess.run(["git", "clone", "-q", str(origin), str(destination)], check=True, capture_output=True)
    cache = ["remote", "add", "--local", "origin-cache", str(origin / ".dvc" / "cache")]
    run_dvc(cache, destination, capture=True, lock=False)
    run_dvc(["pull", "-r", "origin-cache", "--with-deps", *targets], destination, capture=True)
    run_dvc(["remote", "remove", "--local", "origin-cache"], destination, capture=True, lock=False)
    return destination
