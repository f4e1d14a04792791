"""BLAE benchmarks (`icml25 bench blae`): wall time per run of every algorithm, and the design solver vs K.

- Runs: K = 400, d = 10, T = 10⁵ (uniform arms), every registered algorithm on the same instance, BLAS on one
  thread, `repeats` rounds in a seeded random order (`stages.core.timing.interleaved_seconds`, no warm-up: an
  E4 run is a minute here), median seconds and the ratio to BLAE.
- Design: Frank–Wolfe with away steps (tol 10⁻³, λ = 0) on K = 50 → 3,200 uniform arms in d = 10, interleaved
  repeats, median seconds, iterations, seconds per iteration and support size: the iteration count depends on
  the instance, the cost of an iteration grows with K (one K × d² variance pass).

- Official E4 side by side (issue 37): the E4 authors' E3TC (panxulab/optimal-batched-linear-bandits
  `algorithms.py` at da382fb "update E4", fetched into a folder outside the project, never copied here) and our
  E4 on the same instances (the authors' random instances, θ = e₁ and arm 0 = θ, arms shuffled per seed) and
  horizon, each seed's run on one BLAS thread. The same last-phase fix is applied to both: the official class is
  subclassed here so that a D-optimal phase asking for more pulls than are left shares them by its design
  (`spread_counts`), as our `final_phase: spread`. Ours runs with the code's SCS (eps 10⁻²) and with our
  default Clarabel; the noise streams differ (the official code draws with Python's `random`), so regrets
  are compared as distributions over seeds (mean, s.e.), not run by run. `official_e4_dir()`: the folder
  holding the official `algorithms.py` and `arms.py` (`ICML25_E4_OFFICIAL`, default `/tmp/e4-official`); without
  it the section records why it was not run.

Writes reports/benchmarks/blae.{json,png} (and blae_official_e4.json for the side-by-side alone).
"""

from __future__ import annotations

import importlib
import os
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from stages.core.io import write_json
from stages.core.metrics import new_figure, save_figure
from stages.core.timing import interleaved_seconds
from stages.methods.bandits.base import spread_counts
from stages.methods.bandits.design import optimal_design
from stages.methods.bandits.environment import e4_code_instance, shuffled, uniform_instance
from stages.methods.bandits.registry import ALGORITHMS

RESULTS_DIR = Path("reports/benchmarks")
DESIGN_SIZES = (50, 100, 200, 400, 800, 1600, 3200)


def bench_algorithms(n_arms: int = 400, dim: int = 10, horizon: int = 100_000, repeats: int = 2) -> dict:
    """Median wall seconds per run of every algorithm on one instance, and ratios to BLAE."""
    bandit = uniform_instance(n_arms, dim, np.random.default_rng(0))
    outputs: dict[str, dict] = {}

    def runner(name: str):
        def call() -> None:
            trace = ALGORITHMS.build(name).run(bandit, horizon, np.random.default_rng(1))
            outputs[name] = {"final_regret": round(trace.final_regret, 2), "batches": trace.n_batches}

        return call

    seconds = interleaved_seconds({name: runner(name) for name in ALGORITHMS.names()}, repeats, warmup=False)
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    return {
        "n_arms": n_arms,
        "dim": dim,
        "horizon": horizon,
        "repeats": repeats,
        "seconds": {name: [round(v, 4) for v in values] for name, values in seconds.items()},
        "median_seconds": {name: round(value, 4) for name, value in medians.items()},
        "ratio_to_blae": {name: round(value / medians["blae"], 3) for name, value in medians.items()},
        "runs": outputs,
    }


def bench_design(
    dim: int = 10, sizes: tuple[int, ...] = DESIGN_SIZES, repeats: int = 3, tol: float = 1e-3
) -> dict:
    """Median seconds of the design solver per K, with its iterations, support and final gap."""
    rng = np.random.default_rng(0)
    arms = {n: rng.uniform(size=(n, dim)) for n in sizes}
    designs = {}

    def solver(n: int):
        def call() -> None:
            designs[n] = optimal_design(arms[n], tol=tol)

        return call

    seconds = interleaved_seconds({str(n): solver(n) for n in sizes}, repeats)
    return {
        "dim": dim,
        "tol": tol,
        "repeats": repeats,
        "rows": [
            {
                "n_arms": n,
                "median_seconds": round(statistics.median(seconds[str(n)]), 4),
                "iterations": designs[n].iterations,
                "ms_per_iteration": round(
                    1000 * statistics.median(seconds[str(n)]) / max(designs[n].iterations, 1), 4
                ),
                "support": len(designs[n].support),
                "gap": designs[n].gap,
                "max_variance": round(designs[n].max_variance, 6),
            }
            for n in sizes
        ],
    }


def official_e4_dir() -> Path:
    """Where the official E4 code was fetched (`ICML25_E4_OFFICIAL`, default /tmp/e4-official)."""
    return Path(os.environ.get("ICML25_E4_OFFICIAL", "/tmp/e4-official"))


def _official_class(folder: Path):
    """The authors' E3TC, subclassed with the last-phase fix (written here; the official file is untouched)."""
    if not (folder / "algorithms.py").is_file() or not (folder / "arms.py").is_file():
        raise FileNotFoundError(
            f"{folder}: no algorithms.py/arms.py (fetch panxulab/optimal-batched-linear-bandits there)"
        )
    sys.path.insert(0, str(folder))
    try:
        algorithms = importlib.import_module("algorithms")
        arms = importlib.import_module("arms")
    finally:
        sys.path.remove(str(folder))

    class SpreadE3TC(algorithms.E3TC):
        """E3TC whose D-optimal phases share what is left of the horizon by the design when they ask for more."""

        def pull_arms_D_optimal_design(self, context, bandits, sum_pull, horizon):
            wanted = np.asarray(self.D_optimal_design(context, sum_pull), dtype=np.int64)
            counts = spread_counts(wanted, horizon - self.t)
            for arm in range(self.num_arm):
                for _ in range(int(counts[arm])):
                    reward = bandits[arm].draw()
                    self.results_for_this_agent[self.t] = bandits[arm].mean_return
                    self.results_batch[self.t] = self.batch_complexity + 1
                    self.receive_reward(arm, context[:, arm], reward)
                    self.update_model()
            return counts

    return {"spread": SpreadE3TC, "cut": algorithms.E3TC}, arms.GaussianArm


def bench_official_e4(
    folder: Path | None = None, n_arms: int = 50, dim: int = 5, horizon: int = 10_000, seeds: int = 5
) -> dict:
    """Regret, batches and wall seconds of the official E4 (fixed as ours) and ours on the same instances."""
    import warnings

    warnings.filterwarnings(
        "ignore", category=FutureWarning
    )  # cvxpy's reshape-order notice in the official code
    folder = folder or official_e4_dir()
    try:
        officials, gaussian_arm = _official_class(folder)
    except Exception as error:  # the section says why it was not run instead of failing the benchmark
        return {"run": False, "why": f"{type(error).__name__}: {error}"}
    variants = {  # None: the official class with that last phase
        "official_e4_spread": ("spread", None),
        "ours_e4_spread_scs": ("spread", {"sdp_solver": "scs"}),
        "ours_e4_spread_clarabel": ("spread", {}),
        "official_e4_cut": ("cut", None),
        "ours_e4_cut_scs": ("cut", {"sdp_solver": "scs", "final_phase": "cut"}),
    }
    rows = []
    for seed in range(seeds):
        bandit = shuffled(
            e4_code_instance(n_arms, dim, np.random.default_rng(seed)), np.random.default_rng(1000 + seed)
        )
        for label, (final_phase, options) in variants.items():
            started = time.perf_counter()
            if options is None:
                np.random.seed(seed)
                random.seed(seed)
                agent = officials[final_phase](n_arms, dim, 1)
                arms = [gaussian_arm(float(mean), 1) for mean in bandit.means]
                means, batches, _ = agent.run(bandit.arms.T.copy(), arms, horizon)
                regret, n_batches = float(horizon * bandit.means.max() - np.sum(means)), int(batches)
            else:
                trace = ALGORITHMS.build("e4", options).run(bandit, horizon, np.random.default_rng(seed))
                regret, n_batches = trace.final_regret, trace.n_batches
            rows.append(
                {
                    "seed": seed,
                    "variant": label,
                    "final_regret": round(regret, 2),
                    "batches": n_batches,
                    "seconds": round(time.perf_counter() - started, 4),
                }
            )
    summary = {}
    for label in variants:
        mine = [row for row in rows if row["variant"] == label]
        regrets = np.array([row["final_regret"] for row in mine])
        summary[label] = {
            "mean_regret": round(float(regrets.mean()), 2),
            "se_regret": round(float(regrets.std(ddof=1) / np.sqrt(len(regrets))), 2)
            if len(regrets) > 1
            else 0.0,
            "median_seconds": round(statistics.median(row["seconds"] for row in mine), 4),
            "batches": sorted({row["batches"] for row in mine}),
        }
    return {
        "run": True,
        "official": "panxulab/optimal-batched-linear-bandits algorithms.py (da382fb, 'update E4'), E3TC with the "
        "last-phase fix applied by subclassing (`*_spread`) and as it is (`*_cut`); γ = 10, SCS eps 1e-2 as in "
        "the code",
        "instances": "the E4 code's random instances (θ = e₁, arm 0 = θ, others U[0,1]^d), arms shuffled per seed",
        "n_arms": n_arms,
        "dim": dim,
        "horizon": horizon,
        "threads": 1,
        "runs": rows,
        "summary": summary,
    }


def run_official_e4_benchmark(root: str | Path = ".", folder: Path | None = None, seeds: int = 5) -> dict:
    """The side-by-side alone, on one BLAS thread: reports/benchmarks/blae_official_e4.json."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        results = bench_official_e4(folder, seeds=seeds)
    write_json(results, Path(root) / RESULTS_DIR / "blae_official_e4.json")
    return results


def plot(results: dict, path: Path) -> None:
    figure, (left, right) = new_figure(10, 3.8, ncols=2)
    ratios = results["algorithms"]["ratio_to_blae"]
    names = sorted(ratios, key=ratios.get)
    left.bar(names, [ratios[name] for name in names])
    left.axhline(1.0, color="k", linestyle="--", linewidth=0.8)
    left.set_yscale("log")
    left.set_ylabel("wall time / BLAE's (median)")
    a = results["algorithms"]
    left.set_title(f"K = {a['n_arms']}, d = {a['dim']}, T = {a['horizon']:,}", fontsize=9)
    rows = results["design"]["rows"]
    sizes = [r["n_arms"] for r in rows]
    right.loglog(sizes, [r["median_seconds"] for r in rows], marker="o", label="seconds per solve")
    right.loglog(
        sizes, [r["ms_per_iteration"] / 1000 for r in rows], marker="s", label="seconds per iteration"
    )
    right.set_xlabel("arms K")
    right.set_ylabel("seconds (median)")
    right.legend(fontsize=7)
    right.set_title(
        f"Frank–Wolfe + away steps, d = {results['design']['dim']}, gap ≤ {results['design']['tol']}",
        fontsize=9,
    )
    save_figure(figure, path)


def run_blae_benchmarks(root: str | Path = ".", repeats: int = 2) -> dict:
    """Run both benchmarks on one BLAS thread and write reports/benchmarks/blae.{json,png}."""
    from threadpoolctl import threadpool_limits

    root = Path(root)
    with threadpool_limits(1):
        results = {
            "threads": 1,
            "design": bench_design(),
            "algorithms": bench_algorithms(repeats=repeats),
            "official_e4": bench_official_e4(),
        }
    write_json(results, root / RESULTS_DIR / "blae.json")
    plot(results, root / RESULTS_DIR / "blae.png")
    return results


if (
    __name__ == "__main__"
):  # python -m stages.papers.blae.benchmarks [official-folder]: the side-by-side alone
    import json

    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    print(json.dumps(run_official_e4_benchmark(folder=folder)["summary"], indent=2))
