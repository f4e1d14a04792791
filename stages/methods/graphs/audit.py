"""Run a RINGS audit of graph datasets: train per dataset × mode × seed, test separability, measure complementarity.

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
from typing import Any, Literal

import numpy as np
import polars as pl
from pydantic import Field, field_validator

from stages.core.errors import PipelineError
from stages.core.params import StrictModel
from stages.core.progress import progress
from stages.core.seeding import derive_seed
from stages.methods.graphs.complementarity import dataset_complementarity
from stages.methods.graphs.geometry import GraphMetricConfig
from stages.methods.graphs.perturbations import DEFAULT_MODES, PERTURBATIONS, dataset_shape, perturb
from stages.methods.graphs.separability import SeparabilityConfig, compare_modes
from stages.models.graph_training import GnnConfig, gnn_probabilities, train_gnn, train_pooled_mlp
from stages.models.training import TrainConfig

COMPLEMENTARITY_MODES = ("original", "random_features", "geometric_features")


class AuditConfig(StrictModel):
    """Everything an audit run reads."""

    modes: list[str] = Field(default_factory=lambda: list(DEFAULT_MODES), min_length=2)
    seeds: list[int] = Field(
        default_factory=lambda: list(range(12)),
        min_length=2,
        description="runs per mode; pairs for the tests",
    )
    test_fraction: float = Field(0.2, gt=0, lt=1)
    metric: Literal["auroc", "accuracy"] = "auroc"
    gnn: GnnConfig = GnnConfig()
    baseline: TrainConfig = TrainConfig(epochs=50, batch_size=64, learning_rate=1e-3, hidden=(64,))
    separability: SeparabilityConfig = SeparabilityConfig()
    complementarity_modes: list[str] = Field(
        default_factory=lambda: list(COMPLEMENTARITY_MODES), min_length=1
    )
    geometric_dim: int = Field(4, ge=1, description="width of geometric_features (MDS of hop distances)")
    graph_metric: GraphMetricConfig = GraphMetricConfig()
    workers: int = Field(2, ge=1, description="processes training runs in parallel")

    @field_validator("modes", "complementarity_modes")
    @classmethod
    def _known_modes(cls, modes: list[str]) -> list[str]:
        unknown = [mode for mode in modes if mode not in PERTURBATIONS]
        if unknown:
            raise ValueError(f"unknown modes {unknown}; valid names: {', '.join(PERTURBATIONS.names())}")
        if len(set(modes)) != len(modes):
            raise ValueError("modes must be distinct")
        return modes

    @field_validator("seeds")
    @classmethod
    def _distinct_seeds(cls, seeds: list[int]) -> list[int]:
        if len(set(seeds)) != len(seeds) or min(seeds) < 0:
            raise ValueError("seeds must be distinct non-negative integers")
        return seeds

    @field_validator("modes")
    @classmethod
    def _original_first(cls, modes: list[str]) -> list[str]:
        if modes[0] != "original":
            raise ValueError("the first mode must be 'original' (every perturbation is compared with it)")
        return modes


_LOADED: dict[tuple[str, int], list[Any]] = {}


def load_pyg(folder: str | Path) -> list[Any]:
    """The torch_geometric graphs of a graph-table folder (cached per process until its tables change)."""
    from stages.datasets.graphs.table import TABLE_FILES, read_graph_tables, to_pyg

    folder = Path(folder).resolve()
    stamps = [
        (folder / f"{name}.parquet").stat().st_mtime_ns
        for name in TABLE_FILES
        if (folder / f"{name}.parquet").exists()
    ]
    key = (str(folder), max(stamps, default=0))
    if key not in _LOADED:
        _LOADED[key] = to_pyg(read_graph_tables(folder))
    return _LOADED[key]


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
    from sklearn.metrics import roc_auc_score

    n_classes = probabilities.shape[1]
    if len(np.unique(labels)) < 2:
        auroc = float("nan")
    elif n_classes == 2:
        auroc = float(roc_auc_score(labels, probabilities[:, 1]))
    else:
        auroc = float(roc_auc_score(labels, probabilities, multi_class="ovr", labels=list(range(n_classes))))
    return {"auroc": auroc, "accuracy": float((probabilities.argmax(axis=1) == labels).mean())}


def run_one(dataset: str, folder: str, mode: str, seed: int, config: AuditConfig) -> list[dict[str, Any]]:
    """Train the GNN and the structure-blind baseline on one perturbed dataset and score them on its test split."""
    graphs = load_pyg(folder)
    shape = dataset_shape(graphs, config.geometric_dim)
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


def separability_results(runs: pl.DataFrame, config: AuditConfig, seed: int) -> pl.DataFrame:
    """Mode-pair tests per dataset and model, on `config.metric`."""
    frames = []
    for (dataset, model), group in runs.sort("dataset", "model").group_by(
        "dataset", "model", maintain_order=True
    ):
        scores = group.select("mode", "seed", pl.col(config.metric).alias("score"))
        order = {mode: index for index, mode in enumerate(config.modes)}
        scores = scores.sort(pl.col("mode").replace_strict(order, return_dtype=pl.Int64), "seed")
        tests = compare_modes(scores, config.separability, derive_seed(seed, dataset, model))
        frames.append(tests.select(pl.lit(dataset).alias("dataset"), pl.lit(model).alias("model"), pl.all()))
    return pl.concat(frames)


def complementarity_results(datasets: Mapping[str, Path], config: AuditConfig, seed: int) -> pl.DataFrame:
    """Mean complementarity per dataset under each feature mode in `config.complementarity_modes`."""
    rows = []
    for name, folder in datasets.items():
        graphs = load_pyg(folder)
        shape = dataset_shape(graphs, config.geometric_dim)
        for mode in config.complementarity_modes:
            started = time.perf_counter()
            values = dataset_complementarity(
                perturb(graphs, mode, seed, shape), config.graph_metric, desc=f"complementarity {name}/{mode}"
            )
            rows.append(
                {
                    "dataset": name,
                    "mode": mode,
                    "graphs": len(values),
                    "mean": float(values.mean()),
                    "std": float(values.std()),
                    "median": float(np.median(values)),
                    "seconds": round(time.perf_counter() - started, 3),
                }
            )
    return pl.DataFrame(rows)
