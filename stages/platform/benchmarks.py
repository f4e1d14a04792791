"""Benchmarks (`icml25 bench`, `make bench`): speed targets measured side by side, written as JSON and a PNG.

- Parquet (zstd, Polars) write + read of Fashion-MNIST, 70k × 784 uint8, against NumPy `.npy` as reference.
- A no-op `dvc repro` of the whole repository (workspace must be up to date).
- MRMC vs EL2N selection time on the same pool (scoring only, and with the shared trace).
- Stage start-up: process start to the step function, for stages with and without torch
  (`stages/platform/startup_bench.py`; targets ≤ 1 s without torch, ≤ 2 s with it).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

from stages.core.dvc_cli import run_dvc
from stages.core.io import read_parquet, write_json, write_parquet
from stages.core.metrics import new_figure, save_figure
from stages.core.timing import median_seconds
from stages.datasets.classification import from_arrays, to_arrays
from stages.platform.startup_bench import bench_stage_startup

RESULTS_DIR = Path("reports/benchmarks")


def median_of(function: Callable[[], object], repeats: int) -> float:
    """Median wall-clock seconds of `repeats` calls (the shared timing helper)."""
    return median_seconds(function, repeats)[0]


def fashion_mnist_table(root: Path) -> pl.DataFrame:
    """The materialised Fashion-MNIST table, or a random table of the same shape when it is absent."""
    path = root / "data/raw/fashion_mnist/table.parquet"
    if path.is_file():
        return read_parquet(path)
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (70_000, 784), dtype=np.uint8)
    return from_arrays(images, rng.integers(0, 10, 70_000), ["train"] * 70_000)


def bench_parquet(root: Path, repeats: int = 3) -> dict:
    """Write + read seconds of the 70k × 784 table as Parquet, and as .npy for reference."""
    table = fashion_mnist_table(root)
    pixels = to_arrays(table, dtype=np.uint8).features
    with tempfile.TemporaryDirectory() as folder:
        parquet_path, npy_path = Path(folder) / "t.parquet", Path(folder) / "t.npy"
        parquet = median_of(
            lambda: (write_parquet(table, parquet_path), pl.read_parquet(parquet_path)), repeats
        )
        numpy_ref = median_of(lambda: (np.save(npy_path, pixels), np.load(npy_path)), repeats)
        sizes = {"parquet_mb": parquet_path.stat().st_size / 1e6, "npy_mb": npy_path.stat().st_size / 1e6}
    return {
        "rows": table.height,
        "parquet_write_read_s": parquet,
        "npy_write_read_s": numpy_ref,
        "target_s": 2.0,
        **sizes,
    }


def bench_noop_repro(root: Path, repeats: int = 3) -> dict:
    """Seconds of `dvc repro` when nothing changed (fails if the workspace is not up to date)."""
    status = run_dvc(["status", "--json"], root, capture=True).stdout.strip()
    if status not in ("{}", ""):
        return {"skipped": "workspace not up to date: run `make repro` first", "status": status[:500]}
    return {
        "noop_repro_s": median_of(lambda: run_dvc(["repro"], root, capture=True), repeats),
        "target_s": 5.0,
    }


def bench_selection(pool_size: int = 60_000, epochs: int = 10, repeats: int = 20, seed: int = 0) -> dict:
    """MRMC and EL2N selection time on one synthetic 60k pool with a 10-epoch trace (scoring + picking)."""
    from stages.methods.selection.coreset import SelectionPool, budget_count
    from stages.methods.selection.registry import make_selector
    from stages.models.trace import TrainingTrace

    rng = np.random.default_rng(seed)
    decay = rng.gamma(2.0, 0.1, pool_size)
    loss = rng.gamma(2.0, 1.0, pool_size)[:, None] * np.exp(-np.outer(decay, np.arange(1, epochs + 1)))
    trace = TrainingTrace(
        loss=loss.astype(np.float32),
        correct=rng.random((pool_size, epochs)) > 0.3,
        error_norm=rng.random((pool_size, epochs)).astype(np.float32),
    )
    pool = SelectionPool(
        rng.normal(size=(pool_size, 8)).astype(np.float32), rng.integers(0, 10, pool_size), trace
    )
    budget = budget_count(0.3, pool_size)
    seconds = {
        name: median_of(
            lambda name=name: make_selector(name)(pool, budget, np.random.default_rng(0)), repeats
        )
        for name in ("mrmc", "el2n", "forgetting", "random")
    }
    return {
        "pool_size": pool_size,
        "epochs": epochs,
        "budget": budget,
        "seconds": seconds,
        "mrmc_over_el2n": seconds["mrmc"] / seconds["el2n"],
    }


def plot(results: dict, path: Path) -> None:
    """Four panels: Parquet vs .npy, no-op repro vs target, selection seconds per method, stage start-up."""
    figure, panels = new_figure(16, 3.6, ncols=4)
    parquet = results["parquet"]
    panels[0].bar(
        ["parquet", ".npy (ref)", "target"],
        [parquet["parquet_write_read_s"], parquet["npy_write_read_s"], parquet["target_s"]],
        color=["C0", "C7", "C3"],
    )
    panels[0].set_title("70k×784 write+read (s)")
    repro = results["noop_repro"]
    if "noop_repro_s" in repro:
        panels[1].bar(
            ["no-op dvc repro", "target"], [repro["noop_repro_s"], repro["target_s"]], color=["C0", "C3"]
        )
    panels[1].set_title("no-op dvc repro (s)")
    selection = results["selection"]["seconds"]
    panels[2].bar(list(selection), [value * 1000 for value in selection.values()], color="C0")
    panels[2].set_title(f"selection on {results['selection']['pool_size']:,} samples (ms)")
    startup = results["stage_startup"]
    panels[3].bar(
        [row["stage"] for row in startup],
        [row["median_s"] for row in startup],
        color=["C1" if row["torch_loaded"] else "C0" for row in startup],
    )
    panels[3].axhline(1.0, color="C3", linestyle="--", linewidth=1)
    panels[3].axhline(2.0, color="C3", linestyle=":", linewidth=1)
    panels[3].set_title("stage start-up to step (s; orange: torch)")
    panels[3].tick_params(axis="x", rotation=45)
    save_figure(figure, path)


def run_benchmarks(root: str | Path = ".") -> dict:
    """Run all benchmarks and write `reports/benchmarks/benchmarks.{json,png}`."""
    root = Path(root)
    results = {
        "parquet": bench_parquet(root),
        "noop_repro": bench_noop_repro(root),
        "selection": bench_selection(),
        "stage_startup": bench_stage_startup({"workspace": root}),
    }
    out = root / RESULTS_DIR
    write_json(results, out / "benchmarks.json")
    plot(results, out / "benchmarks.png")
    return results
