"""Step `sharpening-prepare`: draw the 2-class subsets and the synthetic datasets; their spectra and Ŝ_D."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_parquet
from stages.methods.sharpness.theory import bounds_from_spectrum, spectrum
from stages.papers.sharpening.data import (
    real_name,
    subset_frame,
    synthetic_dataset,
    synthetic_name,
    two_class_subset,
)
from stages.papers.sharpening.params import SharpeningParams


def needed(params: SharpeningParams) -> tuple[list[int], list[float], list[int]]:
    """Real subset sizes, synthetic difficulties and depths that some sweep or the practical nets use."""
    sizes, difficulties, depths = set(params.practical.n), set(), set(params.practical.depth)
    for sweep in params.sweeps.values():
        if sweep.data == "synthetic":
            difficulties.update(sweep.difficulty)
        else:
            sizes.update(sweep.n)
        depths.update(sweep.depth)
    return sorted(sizes), sorted(difficulties), sorted(depths)


def build_subsets(table: pl.DataFrame, params: SharpeningParams) -> pl.DataFrame:
    """Every subset the sweeps read, one long table."""
    sizes, difficulties, _ = needed(params)
    frames = []
    for seed in params.seeds:
        for n in sizes:
            x, y, ids = two_class_subset(table, params.classes, n, seed)
            frames.append(subset_frame(real_name(n, seed), "real", seed, x, y, ids))
        for difficulty in difficulties:
            synthetic = params.synthetic
            x, y = synthetic_dataset(synthetic.n, synthetic.dim, synthetic.condition, difficulty, seed)
            frames.append(subset_frame(synthetic_name(difficulty, seed), "synthetic", seed, x, y))
    return pl.concat(frames)


def spectra_table(subsets: pl.DataFrame, depths: list[int]) -> pl.DataFrame:
    """Per subset and depth: N, Q, σ₁, d₁, Ŝ_D and the bounds at a balanced minimum."""
    rows = []
    for (name,), frame in sorted(subsets.group_by(["subset"]), key=lambda item: item[0]):
        frame = frame.sort("row")
        spec = spectrum(np.stack(frame["features"].to_numpy()), frame["target"].to_numpy())
        for depth in depths:
            rows.append({"subset": name, **bounds_from_spectrum(spec, depth).as_dict()})
    return pl.DataFrame(rows).with_columns(pl.col("depth").cast(pl.Int64), pl.col("n").cast(pl.Int64))


def run(ctx: StepContext) -> None:
    """Write subsets.parquet and spectra.parquet."""
    params: SharpeningParams = ctx.params.effective()
    subsets = build_subsets(read_parquet(ctx.input("table")), params)
    spectra = spectra_table(subsets, needed(params)[2])
    ctx.log(
        f"{subsets['subset'].n_unique()} subsets; Q from {spectra['difficulty'].min():.3g} to "
        f"{spectra['difficulty'].max():.3g}"
    )
    write_parquet(subsets, ctx.output("subsets"))
    write_parquet(spectra, ctx.output("spectra"))
