"""Byte-identical whichever CPU kernels the machine's libraries would pick by themselves.

`stages/platform/kernels.py` pins every numeric library to its AVX2 path before it loads. Here two model-derived outputs
are made again with another machine's choices forced in the environment (`OTHER_MACHINE_KERNELS`: an older
CPU's kernels in ATen, oneDNN, MKL, OpenBLAS and NumPy): the CNN training trace of MRMC and the MiniLM sentence
embeddings of the Rotten Tomatoes source. The pin gives the same bytes; without it (the control) the forced
choices change the trace. The whole smoke run rebuilt this way is the slow `test_rebuild_identical.py`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stages.core.dvc_cli import run_dvc, subprocess_env
from stages.core.io import file_md5
from stages.core.steps import is_timing_path
from stages.platform.kernels import NATIVE_SWITCH
from stages.platform.smoke import run_smoke
from tests.conftest import OTHER_MACHINE_KERNELS, REPO_ROOT

pytestmark = pytest.mark.integration

TRACE = "data/mrmc/trace.parquet"
EMBEDDINGS = "data/raw/rotten_tomatoes/table.parquet"


def run_stage_elsewhere(workspace: Path, stage: str, native: bool = False) -> str:
    """Run one stage as another machine would (its kernel choices in the environment); returns its log."""
    env = {**subprocess_env(), **OTHER_MACHINE_KERNELS, **({NATIVE_SWITCH: "1"} if native else {})}
    done = subprocess.run(
        [sys.executable, "-m", "stages", "stage", stage],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stderr


def test_another_machines_kernels_give_the_same_training_trace(mrmc_selected):
    made_here = file_md5(mrmc_selected / TRACE)  # by `dvc repro`, with this machine's kernels pinned
    log = run_stage_elsewhere(mrmc_selected, "mrmc-trace")
    assert "[mrmc-trace] kernels: pinned" in log
    assert file_md5(mrmc_selected / TRACE) == made_here
    status = json.loads(run_dvc(["status", "mrmc-trace", "--json"], mrmc_selected, capture=True).stdout)
    changed = [path for entry in status.get("mrmc-trace", []) for path in entry.get("changed outs", {})]
    assert all(is_timing_path(path) for path in changed), status  # DVC agrees: only the stage's seconds moved


def test_without_the_pin_the_other_machines_kernels_change_the_trace(mrmc_selected):
    # the control: the forced choices are a real difference, which only the pin removes
    made_here = file_md5(mrmc_selected / TRACE)
    log = run_stage_elsewhere(mrmc_selected, "mrmc-trace", native=True)
    assert f"[mrmc-trace] kernels: native: {NATIVE_SWITCH}=1" in log
    assert file_md5(mrmc_selected / TRACE) != made_here


def test_another_machines_kernels_give_the_same_sentence_embeddings(tmp_path):
    workspace = run_smoke(["data-rotten_tomatoes"], workdir=tmp_path / "ws", root=REPO_ROOT)
    made_here = file_md5(workspace / EMBEDDINGS)
    log = run_stage_elsewhere(workspace, "data-rotten_tomatoes")
    assert "[data-rotten_tomatoes] kernels: pinned" in log
    assert file_md5(workspace / EMBEDDINGS) == made_here
