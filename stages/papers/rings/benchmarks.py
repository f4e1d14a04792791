"""RINGS benchmarks (`icml25 bench rings`), each measured side by side with a reference in one run.

- Separability of one mode pair with 10,000 permutations: the vectorised KS and Wilcoxon permutation tests
  against the per-permutation loop of the reference implementation (scipy `ks_2samp` / `wilcoxon` called once
  per permutation), on the pipeline's B3DB GNN scores (original vs empty_graph) when they exist.
- Complementarity over all 7,805 parsable B3DB molecules: this project's scipy/csgraph version against a
  networkx lifting (all-pairs shortest paths per connected component, as the reference implementation does).
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import polars as pl
from scipy.spatial.distance import cdist
from scipy.stats import ks_2samp, wilcoxon

from stages.core.io import write_json
from stages.core.metrics import new_figure, save_figure
from stages.core.timing import median_seconds
from stages.datasets.graphs.molecules import load_b3db
from stages.datasets.graphs.table import graph_arrays
from stages.methods.graphs.complementarity import graph_complementarity
from stages.methods.graphs.separability import ks_permutation_test, wilcoxon_permutation_test

RESULTS_DIR = Path("reports/benchmarks")
RUNS = Path("data/rings/runs.parquet")


def pair_scores(root: Path) -> tuple[np.ndarray, np.ndarray, str]:
    """B3DB GNN scores of original and empty_graph from the pipeline, or 12 synthetic pairs when absent."""
    path = root / RUNS
    if path.is_file():
        runs = pl.read_parquet(path).filter((pl.col("dataset") == "b3db") & (pl.col("model") == "gnn"))
        pick = {
            mode: runs.filter(pl.col("mode") == mode).sort("seed")["auroc"].to_numpy()
            for mode in ("original", "empty_graph")
        }
        if all(len(values) for values in pick.values()):
            return pick["original"], pick["empty_graph"], "b3db GNN AUROC, original vs empty_graph"
    rng = np.random.default_rng(0)
    first = rng.normal(0.88, 0.025, 12)
    return (
        first,
        first - rng.normal(0.02, 0.02, 12),
        "synthetic (run `dvc repro rings-train` for B3DB scores)",
    )


def reference_ks(first: np.ndarray, second: np.ndarray, permutations: int, seed: int) -> float:
    """KS permutation p-value with one scipy call per permutation."""
    rng = np.random.default_rng(seed)
    pooled, size = np.concatenate([first, second]), len(first)
    observed = ks_2samp(first, second).statistic
    hits = 0
    for _ in range(permutations):
        shuffled = rng.permutation(pooled)
        hits += ks_2samp(shuffled[:size], shuffled[size:]).statistic >= observed - 1e-12
    return hits / permutations


def reference_wilcoxon(first: np.ndarray, second: np.ndarray, permutations: int, seed: int) -> float:
    """Sign-swap Wilcoxon p-value with one scipy call per permutation (statistic T+ from scipy)."""
    rng = np.random.default_rng(seed)
    differences = first - second
    observed = wilcoxon(differences, alternative="greater").statistic
    centre = len(differences) * (len(differences) + 1) / 4
    hits = 0
    for _ in range(permutations):
        signs = np.where(rng.integers(0, 2, len(differences)) == 1, 1.0, -1.0)
        statistic = wilcoxon(differences * signs, alternative="greater").statistic
        hits += abs(statistic - centre) >= abs(observed - centre) - 1e-12
    return hits / permutations


def bench_separability(root: Path, permutations: int = 10_000, repeats: int = 5) -> dict:
    """One mode pair, both tests: vectorised (median of `repeats`) vs the per-permutation loop (once)."""
    first, second, source = pair_scores(root)
    ks_seconds, ks = median_seconds(lambda: ks_permutation_test(first, second, permutations, 0), repeats)
    wx_seconds, wx = median_seconds(
        lambda: wilcoxon_permutation_test(first, second, permutations, 0), repeats
    )
    ref_ks_seconds, ref_ks = median_seconds(lambda: reference_ks(first, second, permutations, 0), 1)
    ref_wx_seconds, ref_wx = median_seconds(lambda: reference_wilcoxon(first, second, permutations, 0), 1)
    return {
        "scores": source,
        "seeds": len(first),
        "permutations": permutations,
        "ks": {"vectorised_s": round(ks_seconds, 4), "reference_loop_s": round(ref_ks_seconds, 3),
               "p_vectorised": ks.p_value, "p_reference": ref_ks},
        "wilcoxon": {"vectorised_s": round(wx_seconds, 4), "reference_loop_s": round(ref_wx_seconds, 3),
                     "p_vectorised": wx.p_value, "p_reference": ref_wx},
    }  # fmt: skip


def networkx_complementarity(features: np.ndarray, edges: np.ndarray) -> float:
    """Reference: the same score with networkx shortest paths per connected component."""
    graph = nx.empty_graph(len(features))
    graph.add_edges_from(edges.tolist())
    total = 0.0
    for component in nx.connected_components(graph):
        nodes = sorted(component)
        size = len(nodes)
        if size < 2:
            continue
        lengths = dict(nx.all_pairs_shortest_path_length(graph.subgraph(nodes)))
        hops = np.array([[lengths[a][b] for b in nodes] for a in nodes], dtype=np.float64)
        distances = cdist(features[nodes], features[nodes])
        hops, distances = (m / m.max() if m.max() > 0 else m for m in (hops, distances))
        total += size * np.abs(distances - hops).sum() / (size * size - size)
    return total / len(features)


def bench_complementarity() -> dict:
    """Complementarity of every parsable B3DB molecule with original features, both implementations."""
    _, features, edges = graph_arrays(load_b3db(None, seed=0).tables)
    graphs = [(x.astype(np.float64), pairs) for x, pairs in zip(features, edges, strict=True)]
    ours_s, ours = median_seconds(lambda: np.array([graph_complementarity(x, e) for x, e in graphs]), 1)
    ref_s, reference = median_seconds(
        lambda: np.array([networkx_complementarity(x, e) for x, e in graphs]), 1
    )
    return {
        "graphs": len(graphs),
        "scipy_s": round(ours_s, 3),
        "networkx_reference_s": round(ref_s, 3),
        "mean_complementarity": round(float(ours.mean()), 5),
        "max_abs_difference_vs_reference": float(np.abs(ours - reference).max()),
    }


def plot(results: dict, path: Path) -> None:
    """Seconds of each benchmark: this project vs the reference (log scale)."""
    figure, panel = new_figure(7, 4)
    separability, complementarity = results["separability"], results["complementarity"]
    names = [
        "KS 10k perms",
        "Wilcoxon 10k perms",
        f"complementarity\n{complementarity['graphs']:,} B3DB graphs",
    ]
    ours = [
        separability["ks"]["vectorised_s"],
        separability["wilcoxon"]["vectorised_s"],
        complementarity["scipy_s"],
    ]
    reference = [separability["ks"]["reference_loop_s"], separability["wilcoxon"]["reference_loop_s"],
                 complementarity["networkx_reference_s"]]  # fmt: skip
    positions = np.arange(len(names))
    panel.bar(positions - 0.2, ours, 0.4, label="this project (vectorised / scipy csgraph)")
    panel.bar(positions + 0.2, reference, 0.4, label="reference (per-permutation loop / networkx)")
    for position, (a, b) in enumerate(zip(ours, reference, strict=True)):
        panel.annotate(f"{b / a:.0f}×", (position, max(a, b)), ha="center", va="bottom", fontsize=8)
    panel.set_yscale("log")
    panel.set_xticks(positions, names, fontsize=8)
    panel.set_ylabel("seconds (log)")
    panel.set_title("RINGS audit building blocks, one run, 2 cores")
    panel.legend(fontsize=7)
    save_figure(figure, path)


def run_graph_benchmarks(root: str | Path = ".") -> dict:
    """Run both benchmarks and write reports/benchmarks/rings.{json,png}."""
    root = Path(root)
    results = {"separability": bench_separability(root), "complementarity": bench_complementarity()}
    write_json(results, root / RESULTS_DIR / "rings.json")
    plot(results, root / RESULTS_DIR / "rings.png")
    return results
