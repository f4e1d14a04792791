"""fdiv_losses benchmarks (`icml25 bench fdiv_losses`): the f-softargmax and the loss, forward + backward, in one run.

Operators, on the same float32 scores (batch × vocab, N(0, 1) · 3), each timed as forward + backward of
`(op(θ) · g).sum()` with a fixed random g:

- `ours_alpha1.5`: this project's bisection f-softargmax, α = 1.5, `iterations` halvings;
- `entmax_bisect_alpha1.5`: `entmax.entmax_bisect(θ, 1.5, n_iter=iterations)` (equal iterations);
- `entmax15`: `entmax.entmax15` (sort-based, exact);
- `softmax`: `torch.softmax`;
- `ours_kl`: this project's bisection with KL (what the bisection costs where a closed form exists).

Losses against random class labels (what a training step calls), each timed as `loss(θ, labels).backward()`
with mean reduction, at the operator's shape and at the pipeline's char-LM shape (512 positions × 97 tokens):

- `ours_loss_alpha1.5`: `FenchelYoungLoss("alpha", alpha=1.5, iterations=iterations)` (the class-index path:
  no one-hot matrix, gradient p − e_k written into p);
- `entmax15_loss`: `entmax.Entmax15Loss()` at its library defaults (k = 100: a partial sort, widened when the
  support does not fit);
- `entmax_bisect_loss_alpha1.5`: `entmax.EntmaxBisectLoss(1.5, n_iter=iterations)` (equal iterations; the
  library default is 50);
- `cross_entropy`: `torch.nn.CrossEntropyLoss()`; `ours_loss_kl`: `FenchelYoungLoss("kl")`.

Fixed threads (torch one thread on CPU), a warm-up, then `repeats` rounds in a seeded random order
(`stages.core.timing.interleaved_seconds`); medians, the ratios of medians to ours and, for the losses, the
geometric mean over rounds of each round's ratio to ours. Peak memory of one operator forward + backward beyond
the inputs: `torch.cuda.max_memory_allocated` on a GPU, the peak resident set of a fresh subprocess on CPU
(VmHWM reset before the call). Defaults: 4096 × 8192 on a GPU; 1024 × 8192 on CPU (the shared 2-core machine);
override with FDIV_BENCH_BATCH, FDIV_BENCH_VOCAB, FDIV_BENCH_REPEATS, FDIV_BENCH_ITERATIONS.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import torch

from stages.core.io import write_json
from stages.core.timing import interleaved_seconds

RESULTS_DIR = Path("reports/benchmarks")
OURS = "ours_alpha1.5"
LOSS_OURS = "ours_loss_alpha1.5"
LM_SHAPE = (512, 97)


def contenders(iterations: int) -> dict[str, Callable[[torch.Tensor], torch.Tensor]]:
    """name → operator on the last dimension."""
    import entmax

    from stages.methods.losses import divergence, f_softargmax

    alpha15, kl = divergence("alpha", 1.5), divergence("kl")
    return {
        OURS: lambda theta: f_softargmax(theta, alpha15, iterations=iterations),
        "entmax_bisect_alpha1.5": lambda theta: entmax.entmax_bisect(theta, 1.5, dim=-1, n_iter=iterations),
        "entmax15": lambda theta: entmax.entmax15(theta, dim=-1),
        "softmax": lambda theta: torch.softmax(theta, dim=-1),
        "ours_kl": lambda theta: f_softargmax(theta, kl, iterations=iterations),
    }


def loss_contenders(iterations: int) -> dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]]:
    """name → loss(scores, class labels) with mean reduction."""
    import entmax

    from stages.methods.losses import FenchelYoungLoss

    return {
        LOSS_OURS: FenchelYoungLoss("alpha", alpha=1.5, iterations=iterations),
        "entmax15_loss": entmax.Entmax15Loss(),
        "entmax_bisect_loss_alpha1.5": entmax.EntmaxBisectLoss(1.5, n_iter=iterations),
        "cross_entropy": torch.nn.CrossEntropyLoss(),
        "ours_loss_kl": FenchelYoungLoss("kl", iterations=iterations),
    }


def inputs(batch: int, vocab: int, device: str, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Scores and the upstream gradient g."""
    generator = torch.Generator(device="cpu").manual_seed(seed)
    theta = (torch.randn(batch, vocab, generator=generator) * 3).to(device)
    upstream = torch.randn(batch, vocab, generator=generator).to(device)
    return theta, upstream


def forward_backward(
    operator, theta: torch.Tensor, upstream: torch.Tensor, device: str
) -> Callable[[], None]:
    """One timed call: forward, backward, synchronise."""

    def call() -> None:
        leaf = theta.detach().requires_grad_()
        (operator(leaf) * upstream).sum().backward()
        if device == "cuda":
            torch.cuda.synchronize()

    return call


def loss_step(loss, theta: torch.Tensor, labels: torch.Tensor, device: str) -> Callable[[], None]:
    """One timed call: the loss's forward and backward, synchronised."""

    def call() -> None:
        loss(theta.detach().requires_grad_(), labels).backward()
        if device == "cuda":
            torch.cuda.synchronize()

    return call


def time_losses(batch: int, vocab: int, iterations: int, repeats: int, device: str) -> dict:
    """Every loss at one shape, interleaved: medians, ratios to ours, and the values (they must agree)."""
    theta, _ = inputs(batch, vocab, device)
    labels = torch.randint(0, vocab, (batch,), generator=torch.Generator().manual_seed(1)).to(device)
    losses = loss_contenders(iterations)
    calls = {name: loss_step(loss, theta, labels, device) for name, loss in losses.items()}
    seconds = interleaved_seconds(calls, repeats=repeats, seed=1)
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    ours = seconds[LOSS_OURS]
    geometric = {
        name: math.exp(statistics.fmean(math.log(a / b) for a, b in zip(values, ours, strict=True)))
        for name, values in seconds.items()
    }
    with torch.no_grad():
        values = {name: float(loss(theta, labels)) for name, loss in losses.items()}
    return {
        "batch": batch,
        "vocab": vocab,
        "median_seconds": medians,
        "all_seconds": seconds,
        "ratio_to_ours": {name: medians[name] / medians[LOSS_OURS] for name in medians},
        "geometric_mean_ratio_to_ours": geometric,
        "loss_values": values,
    }


def gpu_peak_bytes(operator, theta, upstream) -> int:
    """Peak CUDA memory of one forward + backward beyond what was allocated before it."""
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    forward_backward(operator, theta, upstream, "cuda")()
    return int(torch.cuda.max_memory_allocated() - before)


PEAK_SCRIPT = """
import json, sys, torch
torch.set_num_threads(1)
from stages.papers.fdiv_losses.benchmarks import contenders, forward_backward, inputs
def kib(key):
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith(key + ":"))
name, batch, vocab, iterations = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
theta, upstream = inputs(batch, vocab, "cpu")
small_theta, small_upstream = inputs(8, vocab, "cpu")
operator = contenders(iterations)[name]
forward_backward(operator, small_theta, small_upstream, "cpu")()
before = kib("VmRSS")
open("/proc/self/clear_refs", "w").write("5")
forward_backward(operator, theta, upstream, "cpu")()
print(json.dumps((kib("VmHWM") - before) * 1024))
"""


def cpu_peak_bytes(name: str, batch: int, vocab: int, iterations: int) -> int:
    """Peak resident memory above the inputs during one forward + backward, in a fresh process (Linux: the
    peak VmHWM is reset through /proc/self/clear_refs just before the call)."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    output = subprocess.run(
        [sys.executable, "-c", PEAK_SCRIPT, name, str(batch), str(vocab), str(iterations)],
        capture_output=True, text=True, check=True, env=env,
    )  # fmt: skip
    return int(json.loads(output.stdout.strip().splitlines()[-1]))


def settings() -> dict[str, int | str]:
    """Device and sizes (environment overrides)."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    default_batch = 4096 if device == "cuda" else 1024
    return {
        "device": device,
        "batch": int(os.environ.get("FDIV_BENCH_BATCH", default_batch)),
        "vocab": int(os.environ.get("FDIV_BENCH_VOCAB", 8192)),
        "repeats": int(os.environ.get("FDIV_BENCH_REPEATS", 7)),
        "iterations": int(os.environ.get("FDIV_BENCH_ITERATIONS", 30)),
    }


def run(root: str | Path = ".") -> dict:
    """Time every contender in one run; write reports/benchmarks/fdiv_losses.json."""
    config = settings()
    device, batch, vocab = str(config["device"]), int(config["batch"]), int(config["vocab"])
    iterations, repeats = int(config["iterations"]), int(config["repeats"])
    threads = torch.get_num_threads()
    if device == "cpu":
        torch.set_num_threads(1)
    try:
        theta, upstream = inputs(batch, vocab, device)
        operators = contenders(iterations)
        calls = {name: forward_backward(op, theta, upstream, device) for name, op in operators.items()}
        seconds = interleaved_seconds(calls, repeats=repeats, seed=0)
        with torch.no_grad():
            ours = operators[OURS](theta)
            agreement = {
                "max_abs_ours_vs_entmax_bisect": float(
                    (ours - operators["entmax_bisect_alpha1.5"](theta)).abs().max()
                ),
                "max_abs_ours_vs_entmax15": float((ours - operators["entmax15"](theta)).abs().max()),
                "max_abs_ours_kl_vs_softmax": float(
                    (operators["ours_kl"](theta) - torch.softmax(theta, -1)).abs().max()
                ),
            }
        if device == "cuda":
            peaks = {name: gpu_peak_bytes(op, theta, upstream) for name, op in operators.items()}
        else:
            peaks = {name: cpu_peak_bytes(name, batch, vocab, iterations) for name in operators}
        losses = [
            time_losses(rows, classes, iterations, repeats, device)
            for rows, classes in ((batch, vocab), LM_SHAPE)
        ]
    finally:
        torch.set_num_threads(threads)
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    results = {
        **config,
        "threads": 1 if device == "cpu" else threads,
        "gpu": torch.cuda.get_device_name() if device == "cuda" else None,
        "median_seconds": medians,
        "all_seconds": seconds,
        "ratio_to_ours": {name: medians[name] / medians[OURS] for name in medians},
        "peak_memory_mib": {name: round(value / 2**20, 1) for name, value in peaks.items()},
        "agreement": agreement,
        "losses": losses,
    }
    write_json(results, Path(root) / RESULTS_DIR / f"fdiv_losses_{device}.json")
    return results
