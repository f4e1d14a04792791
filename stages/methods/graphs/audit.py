"""The training runs of a RINGS audit: a GNN and a structure-blind baseline per dataset × mode × seed.

Datasets are graph-table folders (`stages.datasets.graphs.table`). Each (dataset, mode, seed) run perturbs
the dataset with that seed, splits it (stratified, the split fixed by the seed alone so every mode of a seed
sees the same train/test graphs) and trains the GNN and the structure-blind baseline. Runs are independent
and go to `workers` processes; results do not depend on the number of workers.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from stages.core.errors import PipelineError
from stages.core.evaluation import GRAPH_CLASSIFICATION
from stages.core.progress import progress
from stages.core.seeding import derive_seed
from stages.methods.graphs.config import AuditConfig
from stages.methods.graphs.loading import load_pyg
from stages.methods.graphs.perturbations import dataset_shape, perturb
from stages.models.graph_training import gnn_probabilities, train_gnn, train_pooled_mlp


def split_indices(labels: np.ndarray, test_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Stratified train/test indices fixed by `seed` (the same for every mode)."""
    from sklearn.model_selection import train_test_split

    counts = np.bincount(labels)
    stratify = labels if counts[counts > 0].min() >= 2 else None
    train, test = train_test_split(
        np.arange(len(labels)),
        test_size=test_fraction,
        stratify=stratify,
        random_state=derive_seed(seed, "split"),
    )
    return np.sort(train), np.sort(test)


def score(labels: np.ndarray, probabilities: np.ndarray) -> dict[str, float]:
    """AUROC (one-vs-rest macro for several classes) and accuracy of predicted probabilities."""
    return GRAPH_CLASSIFICATION.evaluate(labels, probabilities=probabilities)


def run_one(dataset: str, folder: str, mode: str, seed: int, config: AuditConfig) -> list[dict[str, Any]]:
    """Train the GNN and the structure-blind baseline on one perturbed dataset and score them on its test split."""
    graphs = load_pyg(folder)
    shape = dataset_shape(graphs, config.geometric_dim, config.random_graph_semantics)
    perturbed = perturb(graphs, mode, seed, shape)
    labels = np.asarray([int(graph.y) for graph in graphs])
    n_classes = int(labels.max()) + 1
    train, test = split_indices(labels, config.test_fraction, seed)
    train_graphs, test_graphs = [perturbed[i] for i in train], [perturbed[i] for i in test]
    rows = []
    started = time.perf_counter()
    model = train_gnn(train_graphs, n_classes, config.gnn, derive_seed(seed, "gnn"))
    gnn_scores = score(labels[test], gnn_probabilities(model, test_graphs))
    rows.append({"model": "gnn", **gnn_scores, "seconds": time.perf_counter() - started})
    started = time.perf_counter()
    probabilities = train_pooled_mlp(
        train_graphs, test_graphs, n_classes, config.baseline, derive_seed(seed, "mlp")
    )
    rows.append(
        {"model": "baseline", **score(labels[test], probabilities), "seconds": time.perf_counter() - started}
    )
    return [{"dataset": dataset, "mode": mode, "seed": seed, **row} for row in rows]


def _worker_init() -> None:
    import torch

    torch.set_num_threads(1)


def check_splits(datasets: Mapping[str, Path], config: AuditConfig) -> None:
    """Every seed's test split must hold every class, or the scores are undefined; say which dataset fails."""
    for name, folder in datasets.items():
        labels = pl.read_parquet(Path(folder) / "graphs.parquet").sort("graph_id")["label"].to_numpy()
        classes = len(np.unique(labels))
        for seed in config.seeds:
            _, test = split_indices(labels, config.test_fraction, seed)
            if len(np.unique(labels[test])) < classes:
                raise PipelineError(
                    f"dataset '{name}': the test split of seed {seed} ({len(test)} of {len(labels)} graphs) misses "
                    f"a class; use more graphs or a larger rings.audit.test_fraction (now {config.test_fraction})"
                )


def train_runs(datasets: Mapping[str, Path], config: AuditConfig) -> pl.DataFrame:
    """Every dataset × mode × seed run (GNN and baseline) in `config.workers` processes, with wall-clock seconds."""
    check_splits(datasets, config)
    tasks = [
        (name, str(folder), mode, seed)
        for name, folder in datasets.items()
        for mode in config.modes
        for seed in config.seeds
    ]
    rows: list[dict[str, Any]] = []
    if config.workers == 1:
        import torch

        threads = torch.get_num_threads()
        _worker_init()  # one thread, as in the worker processes, so results do not depend on `workers`
        try:
            for task in progress(tasks, desc="rings runs"):
                rows += run_one(*task, config)
        finally:
            torch.set_num_threads(threads)
    else:
        context = get_context("spawn")
        workers = min(config.workers, len(tasks))
        with ProcessPoolExecutor(workers, mp_context=context, initializer=_worker_init) as pool:
            futures = [pool.submit(run_one, *task, config) for task in tasks]
            for future in progress(as_completed(futures), desc="rings runs", total=len(futures)):
                rows += future.result()
    return pl.DataFrame(rows).sort("dataset", "mode", "seed", "model")


def split_timings(runs: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, Any]]:
    """Runs without their wall-clock column (so reruns give identical bytes) and the timings as JSON."""
    per_cell = runs.group_by("dataset", "model", "mode").agg(pl.col("seconds").mean()).sort(pl.all())
    timings = {
        "total_run_seconds": round(float(runs["seconds"].sum()), 2),
        "mean_seconds_per_run": {
            f"{row['dataset']}/{row['model']}/{row['mode']}": round(row["seconds"], 3)
            for row in per_cell.iter_rows(named=True)
        },
    }
    return runs.drop("seconds"), timings
