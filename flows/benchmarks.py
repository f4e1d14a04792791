"""Orchestration benchmarks (`icml25 bench orchestration`), written to reports/benchmarks/orchestration.json.

Both run in a scratch copy of the workspace with smoke params, where MRMC's pipeline has been run once:

- Overhead: what a user waits for when nothing needs to run: `dvc repro mrmc-claims` vs `icml25 flow mrmc` with
  Prefect's embedded (ephemeral) API vs the same flow reporting to a Prefect server already running on
  127.0.0.1. Each is a fresh process, as when typed; interleaved in random order, medians of repeats. A no-op
  costs per stage, not per byte of data, so smoke sizes measure it.
- Fan-out: 4 independent experiments on 2 Dask workers vs one after another.
"""

import contextlib
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from stages.core.dvc_cli import dvc_executable, subprocess_env
from stages.core.io import write_json
from stages.core.timing import interleaved_seconds, median_seconds
from stages.platform.experiments import run_experiment

SEQUENTIAL = [[f"mrmc.train.epochs={epochs}"] for epochs in (3, 4, 5, 6)]
# Same work, other values: DVC's run cache would otherwise restore the second set instead of running it.
PARALLEL = [[*overrides, "mrmc.train.learning_rate=0.0011"] for overrides in SEQUENTIAL]
OVERHEAD_REPEATS = 3


def _seconds(function) -> float:
    """Seconds of one call (the shared timing helper; these runs take seconds to minutes each)."""
    return median_seconds(function, repeats=1)[0]


def _command(args: list[str], workspace: Path, env: dict[str, str]):
    """A call that runs `args` in `workspace` and fails loudly if it fails."""

    def call() -> None:
        done = subprocess.run(args, cwd=workspace, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:4])} failed: {done.stderr[-2000:]}")

    return call


@contextlib.contextmanager
def running_server(workspace: Path) -> Iterator[str]:
    """A Prefect server (`icml25 serve`'s settings) on a free 127.0.0.1 port for the duration; yields its API URL."""
    from flows.embedded_api import free_port
    from flows.serve import api_url, start_server, stop_processes, wait_for_server

    port = free_port()
    process = start_server(port, workspace)
    try:
        wait_for_server(port, process)
        yield api_url(port)
    finally:
        stop_processes([process.pid])


def bench_overhead(workspace: Path, paper: str = "mrmc", repeats: int = OVERHEAD_REPEATS) -> dict:
    """Seconds of a no-op `dvc repro <paper>-claims` and of the paper flow, embedded and against a server."""
    base = {key: value for key, value in subprocess_env().items() if key != "PREFECT_API_URL"}
    flow = [sys.executable, "-m", "flows", "flow", paper, "--workspace", str(workspace)]
    with tempfile.TemporaryDirectory() as home, running_server(workspace) as url:
        embedded = {**base, "PREFECT_HOME": home}
        calls = {
            "dvc_repro": _command([dvc_executable(), "repro", f"{paper}-claims"], workspace, base),
            "flow_embedded_api": _command(flow, workspace, embedded),
            "flow_running_server": _command(flow, workspace, {**embedded, "PREFECT_API_URL": url}),
        }
        seconds = interleaved_seconds(calls, repeats=repeats, seed=0, warmup=True)
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    return {
        "repeats": repeats,
        "seconds": seconds,
        "median_s": medians,
        "ratio_embedded": medians["flow_embedded_api"] / medians["dvc_repro"],
        "ratio_running_server": medians["flow_running_server"] / medians["dvc_repro"],
    }


def smoke_baseline(repo_root: Path, workspace: Path) -> Path:
    """A committed smoke-params scratch copy where MRMC's pipeline ran once."""
    from stages.platform.smoke import commit_all, run_smoke

    run_smoke(["mrmc-claims"], workdir=workspace, root=repo_root)
    commit_all(workspace, "baseline")
    return workspace


def bench_fan_out(workspace: Path) -> dict:
    """4 experiments sequentially vs on 2 Dask workers, each retraining the smoke models."""
    from flows.experiment_flow import run_all_papers

    sequential = _seconds(
        lambda: [run_experiment("mrmc", overrides, None, workspace) for overrides in SEQUENTIAL]
    )
    parallel = _seconds(lambda: run_all_papers(["mrmc"], PARALLEL, str(workspace)))
    return {
        "runs": len(SEQUENTIAL),
        "workers": 2,
        "sequential_s": sequential,
        "dask_s": parallel,
        "speedup": sequential / parallel,
    }


def run_orchestration_benchmarks(root: str | Path = ".") -> dict:
    """Both benchmarks; results in reports/benchmarks/orchestration.json."""
    root = Path(root).resolve()
    with tempfile.TemporaryDirectory() as folder:
        workspace = smoke_baseline(root, Path(folder) / "ws")
        results = {"overhead": bench_overhead(workspace), "fan_out": bench_fan_out(workspace)}
    write_json(results, root / "reports/benchmarks/orchestration.json")
    return results


if __name__ == "__main__":
    import json

    print(json.dumps(run_orchestration_benchmarks(), indent=2))
