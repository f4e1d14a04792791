"""Stage start-up benchmark: seconds from a stage process's start to the call of its step function.

Each measurement starts `python -m stages stage NAME` exactly as DVC does, with a probe that stops the process
when the runner calls the step function, after seeding, thread pinning and the output transaction's set-up
(the step does not run; its staging folder is removed). Stages are timed interleaved in random
order, with fixed threads, and the median of the repeats is kept; `torch_loaded` says whether the stage had
imported torch by then. `workspaces` lets the same stages be timed in two checkouts (before and after a change).
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

# Run as `python -c PROBE NAME` in the workspace: stdlib only until the stage's own imports.
PROBE = """
import glob, os, runpy, shutil, sys
from importlib.abc import MetaPathFinder
from importlib.machinery import PathFinder

def process_age():
    ticks = os.sysconf("SC_CLK_TCK")
    start = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19]) / ticks
    return float(open("/proc/uptime").read().split()[0]) - start

class Probe(MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname != "stages.platform.pipelines":
            return None
        sys.meta_path.remove(self)
        spec = PathFinder.find_spec(fullname, path)
        run_module = spec.loader.exec_module
        def exec_module(module):
            run_module(module)
            import_ref = module.import_ref
            def import_probed(ref):
                import_ref(ref)  # the step's module and its imports, as a real run pays them
                def stop(*args, **kwargs):
                    print(f"STARTUP {process_age():.3f} {int('torch' in sys.modules)}", flush=True)
                    for staging in glob.glob(f".icml25-staging-{os.getpid()}-*"):
                        shutil.rmtree(staging, ignore_errors=True)
                    os._exit(0)
                return stop
            module.import_ref = import_probed
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, Probe())
sys.argv = ["stages", "stage", sys.argv[1]]
runpy.run_module("stages", run_name="__main__")
"""

DEFAULT_STAGES = ("blae-claims", "tabsds-claims", "data-digits", "mrmc-trace", "fdiv_losses-classify")


def startup_seconds(workspace: Path, stage: str, python: str = sys.executable) -> tuple[float, bool]:
    """One measurement: (seconds from process start to the step call, whether torch was loaded)."""
    env = {**os.environ, "OMP_NUM_THREADS": "2", "ICML25_ANY_INTERPRETER": "1"}
    done = subprocess.run(
        [python, "-c", PROBE, stage], cwd=workspace, env=env, capture_output=True, text=True, check=False
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("STARTUP ")]
    if not lines:
        raise RuntimeError(f"stage {stage} in {workspace} did not reach its step:\n{done.stderr[-2000:]}")
    _, seconds, torch_loaded = lines[-1].split()
    return float(seconds), torch_loaded == "1"


def bench_stage_startup(
    workspaces: dict[str, Path], stages: Sequence[str] = DEFAULT_STAGES, repeats: int = 5, seed: int = 0
) -> list[dict]:
    """Median start-up seconds per (workspace label, stage), measured interleaved in random order."""
    jobs = [(label, stage) for label in workspaces for stage in stages] * repeats
    random.Random(seed).shuffle(jobs)
    samples: dict[tuple[str, str], list[tuple[float, bool]]] = {}
    for label, stage in jobs:
        samples.setdefault((label, stage), []).append(startup_seconds(workspaces[label], stage))
    return [
        {
            "workspace": label,
            "stage": stage,
            "median_s": statistics.median(seconds for seconds, _ in runs),
            "runs_s": [seconds for seconds, _ in runs],
            "torch_loaded": runs[0][1],
        }
        for (label, stage), runs in sorted(samples.items())
    ]
