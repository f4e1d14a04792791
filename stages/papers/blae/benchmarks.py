"""BLAE benchmarks (`icml25 bench blae`): wall time per run of every algorithm, and the design solver vs K.

- Runs: K = 400, d = 10, T = 10⁵ (uniform arms), every registered algorithm on the same instance, BLAS on one
  thread, `repeats` rounds in a seeded random order (`stages.core.timing.interleaved_seconds`, no warm-up: an
  E4 run is a minute here), median seconds and the ratio to BLAE.
- Design: Frank–Wolfe with away steps (tol 10⁻³, λ = 0) on K = 50 → 3,200 uniform arms in d = 10, interleaved
  repeats, median seconds, iterations, seconds per iteration and support size: the iteration count depends on
  the instance, the cost of an iteration grows with K (one K × d² variance pass).

Writes reports/benchmarks/blae.{json,png}.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np

from stages.core.io import write_json
from stages.core.metrics import new_figure, save_figure
from stages.core.timing import interleaved_seconds
from stages.methods.bandits.design import optimal_design
from stages.methods.bandits.environment import uniform_instance
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
        results = {"threads": 1, "design": bench_design(), "algorithms": bench_algorithms(repeats=repeats)}
    write_json(results, root / RESULTS_DIR / "blae.json")
    plot(results, root / RESULTS_DIR / "blae.png")
    return results
