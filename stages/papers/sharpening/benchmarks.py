"""Sharpness benchmarks (`icml25 bench sharpening`), one run, ratios measured side by side.

- cost of one sharpness estimate (Lanczos on Hessian-vector products, the pipeline's tolerance) against one
  GD step of the practical MLP (tanh, width 128, depth 3, N = 200 raw MNIST-sized inputs);
- exact (full Hessian + eigvalsh) against Lanczos at growing parameter counts: their relative disagreement
  and the time ratio.

Timings: one torch thread, a warm-up, `repeats` rounds in a seeded random order
(`stages.core.timing.interleaved_seconds`), medians. Writes reports/benchmarks/sharpening.{json,png}.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np
import torch

from stages.core.io import write_json
from stages.core.metrics import new_figure, save_figure
from stages.core.timing import interleaved_seconds
from stages.methods.sharpness.hessian import exact_top_eigenvalue, flat_loss, lanczos_top_eigenvalue
from stages.papers.sharpening.practical import DeepNet, half_mse

RESULTS_DIR = Path("reports/benchmarks")
LANCZOS_TOL = 1e-4


def _network(in_dim: int, width: int, depth: int, n: int, seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    model = DeepNet(in_dim, width, depth, "tanh").double()
    model.reset(generator)
    inputs = torch.rand((n, in_dim), generator=generator, dtype=torch.float64)
    targets = torch.sign(torch.randn(n, generator=generator, dtype=torch.float64))
    return model, inputs, targets


def estimate_vs_step(repeats: int) -> dict:
    """Seconds of one Lanczos sharpness estimate and of one GD step on the practical MLP, and their ratio."""
    model, inputs, targets = _network(784, 128, 3, 200)
    optimiser = torch.optim.SGD(model.parameters(), lr=1e-3)
    matvecs = []

    def step() -> None:
        optimiser.zero_grad(set_to_none=True)
        half_mse(model(inputs), targets).backward()
        optimiser.step()

    def estimate() -> None:
        fn, theta = flat_loss(model, half_mse, inputs, targets)
        matvecs.append(lanczos_top_eigenvalue(fn, theta, tol=LANCZOS_TOL).matvecs)

    seconds = interleaved_seconds({"train_step": step, "sharpness_estimate": estimate}, repeats)
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    return {
        "params": sum(p.numel() for p in model.parameters()),
        "seconds_median": medians,
        "estimate_over_step": medians["sharpness_estimate"] / medians["train_step"],
        "hessian_vector_products": int(np.median(matvecs)),
    }


def compare_at_width(width: int, repeats: int) -> dict:
    """Exact and Lanczos on a tanh MLP of one width: values, relative difference, median seconds."""
    model, inputs, targets = _network(20, width, 3, 100, seed=width)
    fn, theta = flat_loss(model, half_mse, inputs, targets)
    values = {}

    def exact() -> None:
        values["exact"] = exact_top_eigenvalue(fn, theta)

    def lanczos() -> None:
        values["lanczos"] = lanczos_top_eigenvalue(fn, theta, tol=LANCZOS_TOL)

    seconds = interleaved_seconds({"exact": exact, "lanczos": lanczos}, repeats)
    medians = {name: statistics.median(times) for name, times in seconds.items()}
    exact_value, lanczos_value = values["exact"].value, values["lanczos"].value
    return {
        "width": width,
        "params": theta.numel(),
        "exact": exact_value,
        "lanczos": lanczos_value,
        "relative_difference": abs(exact_value - lanczos_value) / abs(exact_value),
        "lanczos_matvecs": values["lanczos"].matvecs,
        "seconds_median": medians,
        "exact_over_lanczos": medians["exact"] / medians["lanczos"],
    }


def exact_vs_lanczos(widths: list[int], repeats: int) -> list[dict]:
    """:func:`compare_at_width` at growing widths (parameter counts)."""
    return [compare_at_width(width, repeats) for width in widths]


def plot(results: dict, path: Path) -> None:
    """Time per method vs parameter count, and the estimate/step ratio in the title."""
    figure, axis = new_figure(6, 4)
    rows = results["exact_vs_lanczos"]
    params = [row["params"] for row in rows]
    for method in ("exact", "lanczos"):
        axis.plot(params, [row["seconds_median"][method] for row in rows], "o-", label=method)
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlabel("parameters")
    axis.set_ylabel("seconds (median)")
    ratio = results["estimate_vs_step"]["estimate_over_step"]
    axis.set_title(f"top Hessian eigenvalue; MLP: one estimate = {ratio:.1f} GD steps", fontsize=9)
    axis.legend()
    save_figure(figure, path)


def run_benchmarks(root: str | Path = ".", repeats: int = 5) -> dict:
    """Run both benchmarks on one thread and write reports/benchmarks/sharpening.{json,png}."""
    root = Path(root)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        results = {
            "threads": 1,
            "repeats": repeats,
            "lanczos_tol": LANCZOS_TOL,
            "estimate_vs_step": estimate_vs_step(repeats),
            "exact_vs_lanczos": exact_vs_lanczos([4, 8, 16, 32, 48], repeats),
        }
    finally:
        torch.set_num_threads(threads)
    write_json(results, root / RESULTS_DIR / "sharpening.json")
    plot(results, root / RESULTS_DIR / "sharpening.png")
    return results
