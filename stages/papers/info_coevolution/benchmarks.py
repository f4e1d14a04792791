"""Info-Coevolution benchmarks (`icml25 bench info_coevolution`), measured side by side in one run.

- One selection round on the 60k Fashion-MNIST train pool: index build + fused scoring of every row + one
  batch of 100 annotations with neighbour re-scoring, for the HNSW index (the official code's choice) and for
  exact search.
- Building the index and querying 16 neighbours of every row: HNSW (hnswlib) vs exact torch search vs
  scikit-learn's brute-force kNN (the reference), with HNSW's recall against the exact answer.

Embeddings are those of the seed model (trained on 2.5 % of the pool), as in the pipeline's first round.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import torch
from sklearn.neighbors import NearestNeighbors

from stages.core.io import read_parquet, write_json
from stages.core.metrics import new_figure, save_figure
from stages.core.timing import median_seconds
from stages.datasets.classification import to_arrays
from stages.methods.selection.online.loop import fit_model, predict_probabilities
from stages.methods.selection.online.neighbours import CosineIndex, exact_search, unit_rows
from stages.methods.selection.online.registry import make_strategy
from stages.methods.selection.online.strategy import PoolView, TrainingTargets
from stages.models.training import Standardizer, TrainConfig, embed

RESULTS_DIR = Path("reports/benchmarks")
VOTE_NEIGHBOURS = 16


def seed_model_view(features: np.ndarray, labels: np.ndarray, seed_fraction: float = 0.025) -> PoolView:
    """The pool as the first round sees it: a model trained on a random seed set embeds and predicts."""
    rng = np.random.default_rng(0)
    seed_rows = np.sort(rng.choice(len(labels), round(seed_fraction * len(labels)), replace=False))
    standardize = Standardizer.fit(features)
    inputs = standardize(features)
    model = fit_model(inputs, TrainingTargets(seed_rows, labels[seed_rows]), int(labels.max()) + 1,
                      TrainConfig(epochs=10), 300, 0, 0)  # fmt: skip
    labelled = np.zeros(len(labels), bool)
    labelled[seed_rows] = True
    return PoolView(embed(model, inputs), predict_probabilities(model, inputs), labelled,
                    np.where(labelled, labels, -1))  # fmt: skip


def timed(function):
    """(result, seconds) of one call (the shared timing helper, one repeat: the index builds are seconds long)."""
    seconds, result = median_seconds(function, repeats=1)
    return result, seconds


def selection_round(view: PoolView, labels: np.ndarray, backend: str) -> dict[str, float]:
    """Seconds of index build + scoring, and of one batch of 100 annotations, for one backend."""
    fresh = PoolView(view.embeddings, view.probabilities, view.labelled.copy(), view.labels.copy())
    strategy = make_strategy("info_coevolution", {"backend": backend})
    _, build_and_score = timed(lambda: strategy.begin_round(fresh, np.random.default_rng(0)))
    index_only = timed(lambda: CosineIndex(view.embeddings, backend))[1]

    def one_batch() -> None:
        rows = strategy.propose(100)
        strategy.observe(rows, labels[rows])

    _, batch = timed(one_batch)
    return {
        "index_build_s": index_only,
        "scoring_s": max(build_and_score - index_only, 0.0),
        "batch_of_100_s": batch,
        "round_s": build_and_score + batch,
    }


def knn_build_and_query(embeddings: np.ndarray) -> dict:
    """Build + 16-NN of every row: HNSW, exact torch, scikit-learn brute force; HNSW recall vs exact."""
    rows = np.arange(len(embeddings))
    hnsw, hnsw_build = timed(lambda: CosineIndex(embeddings, "hnsw"))
    (hnsw_ids, _), hnsw_query = timed(lambda: hnsw.neighbours(rows, VOTE_NEIGHBOURS))
    unit = unit_rows(embeddings)
    (exact_ids, _), exact_seconds = timed(lambda: exact_search(unit, unit, VOTE_NEIGHBOURS + 1))
    sklearn_search = NearestNeighbors(metric="cosine", algorithm="brute", n_jobs=-1)
    _, sklearn_seconds = timed(
        lambda: sklearn_search.fit(embeddings).kneighbors(embeddings, VOTE_NEIGHBOURS + 1)
    )
    exact_sets = [set(row) - {index} for index, row in enumerate(exact_ids)]
    recall = float(np.mean([len(set(found) & truth) / len(truth)
                            for found, truth in zip(hnsw_ids, exact_sets, strict=True)]))  # fmt: skip
    return {
        "hnsw_build_s": hnsw_build,
        "hnsw_query_s": hnsw_query,
        "exact_torch_s": exact_seconds,
        "sklearn_brute_s": sklearn_seconds,
        "hnsw_recall_at_16": recall,
    }


def plot(results: dict, path: Path) -> None:
    """Left: a selection round by part, per backend. Right: build + query seconds per kNN method."""
    figure, (round_axes, knn_axes) = new_figure(11, 4, ncols=2)
    backends = list(results["selection_round"])
    bottom = np.zeros(len(backends))
    for part in ("index_build_s", "scoring_s", "batch_of_100_s"):
        values = np.array([results["selection_round"][name][part] for name in backends])
        round_axes.bar(backends, values, bottom=bottom, label=part.removesuffix("_s"))
        bottom += values
    round_axes.set_ylabel("seconds")
    round_axes.set_title(f"one selection round, {results['pool_size']:,} rows")
    round_axes.legend(fontsize=8)
    knn = results["knn"]
    knn_axes.bar(["HNSW build", "HNSW query"], [knn["hnsw_build_s"], knn["hnsw_query_s"]], color=["C0", "C9"])
    knn_axes.bar(["exact (torch)", "sklearn brute (ref)"], [knn["exact_torch_s"], knn["sklearn_brute_s"]],
                 color=["C1", "C7"])  # fmt: skip
    knn_axes.set_ylabel("seconds")
    knn_axes.set_title(f"16-NN of every row (HNSW recall {knn['hnsw_recall_at_16']:.3f})")
    save_figure(figure, path)


def run_annotation_benchmarks(root: str | Path = ".") -> dict:
    """Run both benchmarks on the Fashion-MNIST train split; write info_coevolution.{json,png}."""
    root = Path(root)
    table = read_parquet(root / "data/raw/fashion_mnist/table.parquet")
    pool = to_arrays(table.filter(pl.col("split") == "train"))
    view = seed_model_view(pool.features, pool.labels)
    results = {
        "pool_size": len(pool),
        "embedding_dim": int(view.embeddings.shape[1]),
        "torch_threads": torch.get_num_threads(),
        "selection_round": {
            backend: selection_round(view, pool.labels, backend) for backend in ("hnsw", "exact")
        },
        "knn": knn_build_and_query(view.embeddings),
    }
    out = root / RESULTS_DIR
    write_json(results, out / "info_coevolution.json")
    plot(results, out / "info_coevolution.png")
    return results
