"""Orchestration benchmarks (`icml25 bench orchestration`), written to reports/benchmarks/orchestration.json.

- Overhead: the Prefect paper flow vs plain `dvc repro` on the same up-to-date pipeline.
- Fan-out: 4 independent experiments on 2 Dask workers vs one after another, in a smoke-params scratch copy.
"""

import tempfile
from pathlib import Path

from stages.core.dvc_cli import run_dvc
from stages.core.io import write_json
from stages.core.timing import median_seconds
from stages.experiments import run_experiment

SEQUENTIAL = [[f"mrmc.train.epochs={epochs}"] for epochs in (3, 4, 5, 6)]
# Same work, other values: DVC's run cache would otherwise restore the second set instead of running it.
PARALLEL = [[*overrides, "mrmc.train.learning_rate=0.0011"] for overrides in SEQUENTIAL]


def _seconds(function) -> float:
    """Seconds of one call (the shared timing helper; these runs take seconds to minutes each)."""
    return median_seconds(function, repeats=1)[0]


def bench_overhead(workspace: Path, paper: str = "mrmc") -> dict:
    """Seconds of `dvc repro <paper>-claims` and of the paper flow when nothing needs to run."""
    from flows.paper_flow import paper_flow

    plain = _seconds(lambda: run_dvc(["repro", f"{paper}-claims"], workspace, capture=True))
    flow = _seconds(lambda: paper_flow(paper=paper, workspace=str(workspace)))
    return {"dvc_repro_s": plain, "prefect_flow_s": flow, "ratio": flow / plain}


def bench_fan_out(repo_root: Path) -> dict:
    """4 experiments sequentially vs on 2 Dask workers, each retraining the smoke models."""
    from flows.experiment_flow import run_all_papers
    from stages.smoke import apply_smoke_params, commit_all, scratch_copy

    with tempfile.TemporaryDirectory() as folder:
        workspace = scratch_copy(repo_root, Path(folder) / "ws")
        apply_smoke_params(workspace)
        run_dvc(["repro", "mrmc-claims"], workspace, capture=True)
        commit_all(workspace, "baseline")
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
    results = {"overhead": bench_overhead(root), "fan_out": bench_fan_out(root)}
    write_json(results, root / "reports/benchmarks/orchestration.json")
    return results


if __name__ == "__main__":
    import json

    print(json.dumps(run_orchestration_benchmarks(), indent=2))
