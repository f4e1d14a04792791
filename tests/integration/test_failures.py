"""A run killed mid-stage leaves no corrupted output and no stale lock; the next run resumes and succeeds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
import yaml

from stages.core.dvc_cli import dvc_executable, run_dvc, subprocess_env
from stages.core.io import STAGING_PREFIX, file_md5
from stages.core.ownership import LOCK_DIR
from stages.core.params import apply_overrides, read_params_file, write_params_file

pytestmark = pytest.mark.integration


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _train_running(workspace) -> bool:
    """`mrmc-train` holds its stage lock (its pid is written once the lock is taken) and has opened its staging
    folder. A staging folder alone is not enough: the params check (rerun after the epochs edit) stages too."""
    lock = workspace / LOCK_DIR / "mrmc-train.lock"
    holder = lock.read_text().split() if lock.is_file() else []  # "pid 1234, started 12:00:00"
    if len(holder) < 2 or holder[0] != "pid":
        return False
    pid = holder[1].rstrip(",")
    return (
        _pid_alive(int(pid))
        and bool(list(workspace.glob(f"{STAGING_PREFIX}{pid}-*")))
        and not (workspace / "data/mrmc/models").exists()
    )


def _wait_for_train(workspace, process, timeout=180.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _train_running(workspace):
            return
        if process.poll() is not None:
            pytest.fail("dvc repro ended before the train stage could be killed")
        time.sleep(0.2)
    pytest.fail("the train stage never started")


def test_killed_run_leaves_no_partial_output_and_the_rerun_resumes(mrmc_selected):
    workspace = mrmc_selected
    params = workspace / "params.yaml"
    smoke_params = params.read_text()
    write_params_file(apply_overrides(read_params_file(params), ["mrmc.train.epochs=200"]), params)
    lock_before = yaml.safe_load((workspace / "dvc.lock").read_text())["stages"]

    process = subprocess.Popen(
        [dvc_executable(), "repro", "mrmc-claims"],
        cwd=workspace,
        env=subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    _wait_for_train(workspace, process)
    time.sleep(2.0)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()

    assert not (workspace / "data/mrmc/models").exists()  # the killed stage published nothing
    lock = yaml.safe_load((workspace / "dvc.lock").read_text())["stages"]
    assert lock.get("mrmc-train") == lock_before.get("mrmc-train")  # the killed stage recorded nothing
    selections = next(
        out for out in lock["mrmc-select"]["outs"] if out["path"] == "data/mrmc/selections.parquet"
    )
    assert file_md5(workspace / "data/mrmc/selections.parquet") == selections["md5"]  # earlier outputs intact

    params.write_text(smoke_params)  # back to smoke sizes: the rerun need not train 200 epochs
    rerun = run_dvc(["repro", "mrmc-claims"], workspace, capture=True)  # no stale lock
    assert "Stage 'mrmc-select' didn't change, skipping" in rerun.stdout
    assert "Running stage 'mrmc-train'" in rerun.stdout
    assert (workspace / "data/mrmc/claims.json").is_file()
    assert not list(workspace.glob(f"{STAGING_PREFIX}*"))


def _staging_pid(workspace) -> int:
    staged = next(iter(workspace.glob(f"{STAGING_PREFIX}*")))
    return int(staged.name.removeprefix(STAGING_PREFIX).split("-")[0])


def test_killing_dvc_alone_takes_its_stage_along_and_a_second_writer_is_refused(mrmc_selected):
    workspace = mrmc_selected
    params = workspace / "params.yaml"
    smoke_params = params.read_text()
    write_params_file(apply_overrides(read_params_file(params), ["mrmc.train.epochs=200"]), params)

    dvc = subprocess.Popen(
        [dvc_executable(), "repro", "mrmc-claims"],
        cwd=workspace,
        env=subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    _wait_for_train(workspace, dvc)
    stage_pid = _staging_pid(workspace)

    second = subprocess.run(  # the same stage again, while the first still runs
        [sys.executable, "-m", "stages", "stage", "mrmc-train"],
        cwd=workspace,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert second.returncode != 0
    assert "stage 'mrmc-train' is already running in this workspace" in second.stderr

    dvc.kill()  # only `dvc`, not its process group: the stage would be an orphan
    dvc.wait()
    deadline = time.monotonic() + 20
    while _pid_alive(stage_pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _pid_alive(stage_pid), "the stage outlived the dvc that launched it"
    assert not (workspace / "data/mrmc/models").exists()  # and published nothing

    params.write_text(smoke_params)  # back to smoke sizes: the rerun need not train 200 epochs
    rerun = run_dvc(["repro", "mrmc-train"], workspace, capture=True)
    assert "Running stage 'mrmc-train'" in rerun.stdout
    assert (
        run_dvc(["status", "mrmc-train"], workspace, capture=True)
        .stdout.strip()
        .endswith("Data and pipelines are up to date.")
    )
