"""Step `sharpening-train_minimalist`: every sweep of the minimalist model, sharpness tracked exactly.

Each (sweep, subset, depth, batch size) trains its step sizes together (`minimalist.train_runs`); a run's row
holds its setting, the closed form of its data (Q, Ŝ_D, bounds, 2/η) and how it ended; its trajectory holds
the tracker's records (step, sharpness, loss).
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_parquet
from stages.core.progress import progress
from stages.methods.sharpness.theory import bounds_from_spectrum
from stages.papers.sharpening.data import load_subset, real_name, synthetic_name
from stages.papers.sharpening.minimalist import ReducedData, RunSpec, reduce, train_runs
from stages.papers.sharpening.params import SharpeningParams, SweepParams
from stages.papers.sharpening.threads import one_thread


def settings(name: str, sweep: SweepParams, seeds: list[int]) -> list[dict]:
    """The (subset, depth, batch size) groups of one sweep, each with its step rule."""
    groups = sweep.difficulty if sweep.data == "synthetic" else sweep.n
    out = []
    for seed, group, depth, batch in itertools.product(seeds, groups, sweep.depth, sweep.batch_size):
        subset = synthetic_name(group, seed) if sweep.data == "synthetic" else real_name(group, seed)
        out.append({"sweep": name, "subset": subset, "seed": seed, "depth": depth, "batch_size": batch})
    return out


def step_sizes(sweep: SweepParams, predicted: float) -> list[tuple[str, float, float]]:
    """(rule, value, η) per step size: `ratio` gives η = 2·ratio/Ŝ_D, `eta` is absolute."""
    if sweep.ratio is not None:
        return [("ratio", ratio, 2 * ratio / predicted) for ratio in sweep.ratio]
    return [("eta", eta, eta) for eta in sweep.eta]


def initial_scale(kappa: float, difficulty: float, depth: int) -> float:
    """α = κ·Q^{1/(2D)}: the balanced init as a share κ of the balanced minimum's scale c (c^{2D} = Q)."""
    return kappa * difficulty ** (1 / (2 * depth))


def small_init_rise(data: ReducedData) -> float:
    """R₀ = σ₁²√Q/‖Xᵀy‖: the D = 2 rise S(balanced minimum)/S(init) as the init scale goes to 0 (at a tiny
    init the Hessian's top eigenvalue is ‖Xᵀy‖/N from the u–v block, at the minimum about σ₁²√Q/N)."""
    return float(
        data.sigma[0] ** 2 * np.sqrt(data.spectrum().difficulty) / np.linalg.norm(data.sigma * data.d)
    )


def prepared_runs(subsets: pl.DataFrame, groups: list[tuple[dict, SweepParams]], kappa: float) -> list[dict]:
    """One entry per run: its group, data (SVD coordinates), closed form, init scale α, batch size and spec."""
    out = []
    for group, sweep in groups:
        x, y = load_subset(subsets, group["subset"])
        data = reduce(x, y)
        bounds = bounds_from_spectrum(data.spectrum(), group["depth"])
        alpha = initial_scale(kappa, bounds.difficulty, group["depth"])
        batch = group["batch_size"] or data.n
        for rule, value, eta in step_sizes(sweep, bounds.predicted):
            spec = RunSpec(group["seed"], eta, batch, {"rule": rule, "rule_value": value})
            out.append({"group": group, "data": data, "bounds": bounds, "alpha": alpha, "spec": spec})
    return out


def result_row(entry: dict, result) -> dict:
    """The runs.parquet row of one run."""
    group, data, bounds, spec = entry["group"], entry["data"], entry["bounds"], entry["spec"]
    label = f"{spec.labels['rule']}{spec.labels['rule_value']:g}"
    return {
        "run_id": f"{group['sweep']}/{group['subset']}/D{group['depth']}/B{spec.batch_size}/{label}",
        **group,
        "batch_size": spec.batch_size,
        "gd": spec.batch_size == data.n,
        "n": data.n,
        **spec.labels,
        "eta": spec.eta,
        "threshold": 2 / spec.eta,
        "difficulty": bounds.difficulty,
        "sigma1": bounds.sigma1,
        "predicted": bounds.predicted,
        "lower": bounds.lower,
        "upper": bounds.upper,
        "init_scale": entry["alpha"],
        "small_init_rise": small_init_rise(data),
        "status": result.status,
        "steps": result.steps,
        "final_loss": result.final_loss,
        "initial_sharpness": result.initial_sharpness,
        "final_sharpness": result.final_sharpness,
    }


def train_bucket(entries: list[dict], params: SharpeningParams) -> tuple[list[dict], list[dict]]:
    """Train runs that share a batch size (and N for mini-batches) in one vectorised loop."""
    settings_ = params.minimalist
    results = train_runs(
        [entry["data"] for entry in entries],
        [entry["group"]["depth"] for entry in entries],
        [entry["spec"] for entry in entries],
        [entry["alpha"] for entry in entries],
        settings_.loss_target,
        settings_.max_steps,
        settings_.every,
    )
    rows, records = [], []
    for entry, result in zip(entries, results, strict=True):
        row = result_row(entry, result)
        rows.append(row)
        records += [
            {"run_id": row["run_id"], "step": r["step"], "sharpness": r["sharpness"], "loss": r["loss"]}
            for r in result.records
        ]
    return rows, records


def buckets(entries: list[dict]) -> list[list[dict]]:
    """GD runs of a sweep together; mini-batch runs by (N, B)."""
    keyed: dict[tuple, list[dict]] = {}
    for entry in entries:
        gd = entry["spec"].batch_size == entry["data"].n
        key = (
            (entry["group"]["sweep"], "gd")
            if gd
            else (entry["group"]["sweep"], entry["data"].n, entry["spec"].batch_size)
        )
        keyed.setdefault(key, []).append(entry)
    return list(keyed.values())


def run(ctx: StepContext) -> None:
    """Train every sweep; write runs.parquet and trajectories.parquet."""
    params: SharpeningParams = ctx.params.effective()
    subsets = read_parquet(ctx.input("subsets"))
    groups = [
        (group, sweep)
        for name, sweep in params.sweeps.items()
        for group in settings(name, sweep, params.seeds)
    ]
    rows, records = [], []
    with one_thread():
        for bucket in progress(
            buckets(prepared_runs(subsets, groups, params.minimalist.init_scale)), desc="minimalist buckets"
        ):
            bucket_rows, bucket_records = train_bucket(bucket, params)
            rows += bucket_rows
            records += bucket_records
    runs = pl.DataFrame(rows).sort("run_id")
    counts = runs["status"].value_counts().sort("status").rows()
    ctx.log(f"{runs.height} runs: {', '.join(f'{status} {count}' for status, count in counts)}")
    write_parquet(runs, ctx.output("runs"))
    write_parquet(pl.DataFrame(records).sort("run_id", "step"), ctx.output("trajectories"))
