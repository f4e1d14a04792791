"""Step `mrmc-train`: train a fresh model on every core-set (and on the full pool as reference).

Each seed's models start from the same initialisation, so methods are compared on paired runs. Only the pool
is a dependency: the test split cannot leak into training.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import polars as pl
import torch
from safetensors.torch import load_file, save_file

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_json
from stages.core.progress import progress
from stages.core.seeding import derive_seed
from stages.datasets.classification import to_arrays
from stages.models.training import Standardizer, UnitScaler, build_model, fit_scaler, train_classifier

STANDARDIZER_FILE = "standardizer.safetensors"
INDEX_FILE = "index.json"


def save_scaler(scaler: Standardizer | UnitScaler, path: Path) -> None:
    """The input scaling fitted on the pool (per-feature mean/std for the MLP, one low/high for the CNN)."""
    if isinstance(scaler, Standardizer):
        tensors = {"mean": torch.from_numpy(scaler.mean), "std": torch.from_numpy(scaler.std)}
    else:
        tensors = {"low": torch.tensor([scaler.low]), "high": torch.tensor([scaler.high])}
    save_file(tensors, path)


def load_scaler(path: Path) -> Standardizer | UnitScaler:
    """The scaling :func:`save_scaler` wrote."""
    tensors = load_file(path)
    if "mean" in tensors:
        return Standardizer(mean=tensors["mean"].numpy(), std=tensors["std"].numpy())
    return UnitScaler(low=float(tensors["low"][0]), high=float(tensors["high"][0]))


def run_key(method: str, budget: float, seed: int) -> str:
    """File stem of one run's model."""
    return f"{method}__{budget:.4f}__{seed}"


def run(ctx: StepContext) -> None:
    """Train one model per (method, budget, seed) in the selection table."""
    params = ctx.params
    pool_frame = read_parquet(ctx.input("pool"))
    pool = to_arrays(pool_frame)
    position = {int(sample_id): row for row, sample_id in enumerate(pool.sample_ids)}
    scaler = fit_scaler(pool.features, params.train)
    inputs, labels = scaler(pool.features), torch.from_numpy(pool.labels)
    n_classes = int(pool.labels.max()) + 1
    selections = read_parquet(ctx.input("selections"))
    runs = selections.group_by(["method", "budget", "seed"], maintain_order=True).agg(pl.col("sample_id"))
    models_dir: Path = ctx.output("models")
    models_dir.mkdir()
    save_scaler(scaler, models_dir / STANDARDIZER_FILE)
    index, timings = [], []
    for method, budget, seed, sample_ids in progress(runs.iter_rows(), desc="train", total=runs.height):
        rows = torch.from_numpy(np.array([position[int(i)] for i in sample_ids], dtype=np.int64))
        model = build_model(
            inputs.shape[1], n_classes, params.train, derive_seed(ctx.common.seed, "mrmc", "init", seed)
        )
        started = time.perf_counter()
        train_classifier(
            model,
            inputs[rows],
            labels[rows],
            params.train,
            derive_seed(ctx.common.seed, "mrmc", "train", method, budget, seed),
        )
        seconds = time.perf_counter() - started
        key = run_key(method, budget, seed)
        save_file(model.state_dict(), models_dir / f"{key}.safetensors")
        index.append(
            {
                "method": method,
                "budget": budget,
                "seed": seed,
                "n_train": len(rows),
                "file": f"{key}.safetensors",
            }
        )
        timings.append({"method": method, "budget": budget, "seed": seed, "seconds": round(seconds, 4)})
    architecture = {
        "in_dim": int(inputs.shape[1]),
        "n_classes": n_classes,
        "config": params.train.model_dump(mode="json"),
    }
    write_json({"architecture": architecture, "runs": index}, models_dir / INDEX_FILE)
    write_json({"train_seconds": timings}, ctx.output("timings"))
    ctx.log(f"trained {len(index)} models")
