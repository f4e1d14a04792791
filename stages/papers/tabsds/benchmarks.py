"""TabSDS benchmarks (`icml25 bench tabsds`): how TabSDS's cost grows with the row count.

A table of n rows with 8 numeric (Gaussian, correlated) and 2 categorical columns (5 and 3 levels) for
n = 10⁴, 10⁵, 10⁶; fit + sample seconds of TabSDS (n_c = 30), median of `repeats`, and seconds per row. The
cost is a sort per column per shuffle round, so it should grow like n log n. Time ratios of every synthesizer
to TabSDS on the pipeline's sets are in `data/tabsds/timings/time_summary.json` (one run of the pipeline).

Writes reports/benchmarks/tabsds.json.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from stages.core.io import write_json
from stages.core.timing import median_seconds
from stages.methods.tabular.registry import SYNTHESIZERS

RESULTS_DIR = Path("reports/benchmarks")
SIZES = (10_000, 100_000, 1_000_000)


def bench_table(n: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, 1))
    numeric = {f"x{j}": (base[:, 0] * 0.5 + rng.normal(size=n)) for j in range(8)}
    return pl.DataFrame(
        {**numeric, "a": rng.choice(list("abcde"), size=n), "b": rng.choice(["u", "v", "w"], size=n)}
    )


def _synthesis(table: pl.DataFrame):
    def call() -> pl.DataFrame:
        return SYNTHESIZERS.build("tabsds", {"n_levels": 30}).fit(table).sample(np.random.default_rng(0))

    return call


def scaling(sizes=SIZES, repeats: int = 3) -> list[dict]:
    rows = []
    for n in sizes:
        table = bench_table(n)
        seconds, _ = median_seconds(_synthesis(table), repeats=repeats)
        rows.append(
            {
                "rows": n,
                "median_seconds": round(seconds, 4),
                "microseconds_per_row": round(seconds / n * 1e6, 3),
            }
        )
    return rows


def run_benchmarks() -> dict:
    """TabSDS fit + sample seconds at 10⁴, 10⁵, 10⁶ rows."""
    result = {"tabsds_scaling": scaling(), "columns": {"numeric": 8, "categorical": 2}, "n_levels": 30}
    write_json(result, RESULTS_DIR / "tabsds.json")
    return result
