"""RINGS benchmarks (`icml25 bench rings`): this project's functions against the official RINGS code, one run.

The official side is the `rings` package of the PyPI sdist `rings-evaluation==0.1.0` when it can be imported,
else a re-run of its algorithm (`official_rerun.py`, aidos-lab/rings 68a58a4); `source` in the JSON says which.
Every contender gets the same inputs, one thread (torch and BLAS pinned), a warm-up, then `repeats` rounds in a
seeded random order (`stages.core.timing.interleaved_seconds`); the median seconds and the ratio official /
ours are reported with the outputs' largest difference.

- complementarity of all 7,805 parsable B3DB molecules (original features, shortest paths): the official
  `ComplementarityFunctor` vs `dataset_complementarity`;
- one mode pair, both permutation tests with 10,000 permutations (B3DB GNN AUROC, original vs empty_graph
  from the pipeline when it has run): `KSComparator` / `WilcoxonComparator` vs the vectorised tests, and the
  decisions of both on all 28 pairs of that table after Bonferroni;
- `RandomGraph()` vs `random_graph` under `random_graph_semantics: official` (same edge counts) on B3DB.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from stages.core.io import write_json
from stages.core.metrics import new_figure, save_figure
from stages.core.timing import interleaved_seconds
from stages.datasets.graphs.molecules import load_b3db
from stages.datasets.graphs.table import to_pyg
from stages.methods.graphs.complementarity import dataset_complementarity
from stages.methods.graphs.config import SeparabilityConfig
from stages.methods.graphs.perturbations import dataset_shape, perturb, undirected_edges
from stages.methods.graphs.separability import (
    compare_modes,
    ks_permutation_test,
    mode_pairs,
    wilcoxon_permutation_test,
)
from stages.papers.rings.official_rerun import OfficialFunctions, official_functions

RESULTS_DIR = Path("reports/benchmarks")
RUNS = Path("data/rings/runs.parquet")
PERMUTATIONS = 10_000
ALPHA = 0.01


@contextmanager
def one_thread():
    """torch and BLAS on one thread while timing (the ratios then compare algorithms, not thread pools)."""
    import torch
    from threadpoolctl import threadpool_limits

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(1):
            yield
    finally:
        torch.set_num_threads(threads)


def timed(functions: dict[str, Callable[[], Any]], repeats: int) -> tuple[dict[str, float], dict[str, Any]]:
    """Median seconds per function (interleaved, warm-up excluded) and each function's last output."""
    outputs: dict[str, Any] = {}

    def keeping(name: str, function: Callable[[], Any]) -> Callable[[], None]:
        def call() -> None:
            outputs[name] = function()

        return call

    seconds = interleaved_seconds({name: keeping(name, f) for name, f in functions.items()}, repeats)
    return {name: statistics.median(values) for name, values in seconds.items()}, outputs


def ratio_entry(seconds: dict[str, float]) -> dict[str, float]:
    """Median seconds of both and how many times faster this project is."""
    return {
        "ours_s": round(seconds["ours"], 4),
        "official_s": round(seconds["official"], 4),
        "speedup": round(seconds["official"] / seconds["ours"], 2),
    }


def bench_complementarity(graphs: list, official: OfficialFunctions, repeats: int = 3) -> dict:
    """Complementarity of every graph, both implementations, and where they differ."""
    seconds, out = timed(
        {
            "ours": lambda: dataset_complementarity(graphs),
            "official": lambda: official.complementarity(graphs),
        },
        repeats,
    )
    difference = np.abs(np.asarray(out["ours"], np.float64) - np.asarray(out["official"], np.float64))
    edgeless = np.array([graph.num_nodes > 1 and len(undirected_edges(graph)) == 0 for graph in graphs])
    return {
        "graphs": len(graphs),
        **ratio_entry(seconds),
        "mean_complementarity": round(float(np.mean(out["ours"])), 6),
        "max_abs_difference": float(difference.max()),
        "graphs_differing_over_1e-9": int((difference > 1e-9).sum()),
        "edgeless_graphs": int(edgeless.sum()),
    }


def run_scores(root: Path) -> tuple[pl.DataFrame, str]:
    """B3DB GNN scores per mode and seed from the pipeline, or a synthetic 8-mode table when it has not run."""
    path = root / RUNS
    if path.is_file():
        runs = pl.read_parquet(path).filter((pl.col("dataset") == "b3db") & (pl.col("model") == "gnn"))
        if runs.height and {"original", "empty_graph"} <= set(runs["mode"]):
            return runs.select("mode", "seed", pl.col("auroc").alias("score")), "b3db GNN AUROC (rings-train)"
    rng = np.random.default_rng(0)
    means = dict(original=0.88, empty_graph=0.86, empty_features=0.74, random_features=0.52)
    rows = [
        {"mode": mode, "seed": seed, "score": mean + 0.02 * rng.standard_normal()}
        for mode, mean in means.items()
        for seed in range(14)
    ]
    return pl.DataFrame(rows), "synthetic (run `dvc repro rings-train` for B3DB scores)"


def _pair(scores: pl.DataFrame, mode: str) -> np.ndarray:
    return scores.filter(pl.col("mode") == mode).sort("seed")["score"].to_numpy()


def bench_separability(scores: pl.DataFrame, official: OfficialFunctions, repeats: int = 3) -> dict:
    """original vs empty_graph, both tests: the official per-permutation loops vs the vectorised tests."""
    first, second = _pair(scores, "original"), _pair(scores, "empty_graph")
    results = {}
    for name, ours, theirs in (
        ("ks", ks_permutation_test, official.ks),
        ("wilcoxon", wilcoxon_permutation_test, official.wilcoxon),
    ):
        seconds, out = timed(
            {
                "ours": lambda ours=ours: ours(first, second, PERMUTATIONS, 0),
                "official": lambda theirs=theirs: theirs(first, second, PERMUTATIONS),
            },
            repeats,
        )
        results[name] = {
            **ratio_entry(seconds),
            "p_ours": out["ours"].p_value,
            "p_official": float(out["official"]["pvalue"]),
        }
    return {"seeds": len(first), "permutations": PERMUTATIONS, **results}


def pair_decisions(scores: pl.DataFrame, official: OfficialFunctions) -> dict:
    """Both tests on every mode pair, Bonferroni over all pairs: do the two implementations decide alike?"""
    modes = list(dict.fromkeys(scores["mode"].to_list()))
    ours = compare_modes(scores, SeparabilityConfig(permutations=PERMUTATIONS, alpha=ALPHA, pairs="all"), 0)
    pairs = mode_pairs(modes, "all")
    disagreements = []
    for first_mode, second_mode in pairs:
        a, b = _pair(scores, first_mode), _pair(scores, second_mode)
        for test, function in (("ks", official.ks), ("wilcoxon", official.wilcoxon)):
            theirs = min(1.0, float(function(a, b, PERMUTATIONS)["pvalue"]) * len(pairs)) < ALPHA
            mine = ours.filter(
                (pl.col("mode_a") == first_mode)
                & (pl.col("mode_b") == second_mode)
                & (pl.col("test") == test)
            )["significant"].item()
            if mine != theirs:
                disagreements.append(
                    f"{first_mode} vs {second_mode} ({test}): ours {mine}, official {theirs}"
                )
    return {"pairs": len(pairs), "tests": 2 * len(pairs), "disagreements": disagreements}


def bench_random_graph(graphs: list, official: OfficialFunctions, repeats: int = 3) -> dict:
    """The official RandomGraph() vs random_graph with random_graph_semantics: official."""
    shape = dataset_shape(graphs, random_graph_semantics="official")
    seconds, out = timed(
        {
            "ours": lambda: perturb(graphs, "random_graph", 0, shape),
            "official": lambda: official.random_graph(graphs),
        },
        repeats,
    )
    edges = {name: sum(int(graph.edge_index.shape[1]) for graph in out[name]) for name in out}
    return {**ratio_entry(seconds), "edges_ours": edges["ours"], "edges_official": edges["official"]}


def plot(results: dict, path: Path) -> None:
    """Median seconds, this project vs the official code, with the speed-up (log scale)."""
    entries = {
        f"complementarity\n{results['complementarity']['graphs']:,} B3DB graphs": results["complementarity"],
        "KS, 10k perms": results["separability"]["ks"],
        "Wilcoxon, 10k perms": results["separability"]["wilcoxon"],
        "random graph\n(official semantics)": results["random_graph"],
    }
    figure, panel = new_figure(7, 4)
    positions = np.arange(len(entries))
    ours = [entry["ours_s"] for entry in entries.values()]
    theirs = [entry["official_s"] for entry in entries.values()]
    panel.bar(positions - 0.2, ours, 0.4, label="this project")
    panel.bar(positions + 0.2, theirs, 0.4, label=results["official_source"][:60])
    for position, entry in enumerate(entries.values()):
        top = max(entry["ours_s"], entry["official_s"])
        panel.annotate(f"{entry['speedup']:g}×", (position, top), ha="center", va="bottom", fontsize=8)
    panel.set_yscale("log")
    panel.set_xticks(positions, list(entries), fontsize=8)
    panel.set_ylabel("median seconds (log), one thread")
    panel.set_title("RINGS building blocks vs the official code, one run")
    panel.legend(fontsize=7)
    save_figure(figure, path)


def run_graph_benchmarks(root: str | Path = ".", repeats: int = 3) -> dict:
    """Run every benchmark and write reports/benchmarks/rings.{json,png}."""
    root = Path(root)
    official = official_functions()
    graphs = to_pyg(load_b3db(None, seed=0).tables)
    scores, source = run_scores(root)
    with one_thread():
        results = {
            "official_source": official.source,
            "threads": 1,
            "repeats": repeats,
            "scores": source,
            "complementarity": bench_complementarity(graphs, official, repeats),
            "separability": bench_separability(scores, official, repeats),
            "all_pair_decisions": pair_decisions(scores, official),
            "random_graph": bench_random_graph(graphs, official, repeats),
        }
    write_json(results, root / RESULTS_DIR / "rings.json")
    plot(results, root / RESULTS_DIR / "rings.png")
    return results
