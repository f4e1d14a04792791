"""Dynamic-selection benchmarks (`icml25 bench dynamic_selection`), measured side by side in one run.

On the pipeline's prepared pool (clean labels, its consistency scores) and its training recipe, every method
trains back to back, `repeats` times interleaved: the per-epoch scoring overhead as a share of epoch time, and
the total training time at ratio 0.5 against full data (the reference).
"""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np
import torch

from stages.core.errors import MissingSourceError
from stages.core.io import read_parquet, write_json
from stages.core.metrics import new_figure, save_figure
from stages.core.params import load_section
from stages.papers.dynamic_selection.data import load_selection_data
from stages.papers.dynamic_selection.params import DynamicSelectionParams
from stages.papers.dynamic_selection.train import RunContext, semantic_scores

RESULTS_DIR = Path("reports/benchmarks")
PIPELINE_DIR = Path("data/dynamic_selection")


def load_inputs(root: Path, params: DynamicSelectionParams):
    """The prepared pool and consistency scores (run the pipeline's first two stages first)."""
    folder = root / PIPELINE_DIR
    needed = [
        folder / name for name in ("pool.parquet", "test.parquet", "labels.parquet", "consistency.parquet")
    ]
    missing = [str(path) for path in needed if not path.is_file()]
    if missing:
        raise MissingSourceError(
            f"{', '.join(missing)} not found: run `dvc repro dynamic_selection-consistency`"
        )
    data = load_selection_data(*needed[:3])
    return data, read_parquet(needed[3])


def time_runs(context: RunContext, runs: list[tuple[str, float]], repeats: int) -> dict:
    """Per (method, ratio): median over repeats of total, scoring and training seconds, and the scoring share."""
    measured: dict[str, list[dict]] = {f"{label}@{ratio:g}": [] for label, ratio in runs}
    for _ in range(repeats):
        for label, ratio in runs:
            _, records = context.train(label, ratio)
            scoring = sum(record.scoring_seconds for record in records)
            training = sum(record.training_seconds for record in records)
            measured[f"{label}@{ratio:g}"].append({"scoring_s": scoring, "training_s": training})
    results = {}
    for name, samples in measured.items():
        scoring = statistics.median(sample["scoring_s"] for sample in samples)
        training = statistics.median(sample["training_s"] for sample in samples)
        results[name] = {
            "scoring_s": round(scoring, 4),
            "training_s": round(training, 4),
            "total_s": round(scoring + training, 4),
            "scoring_share_of_epoch": round(scoring / (scoring + training), 4),
        }
    return results


def plot(results: dict, path: Path) -> None:
    """Left: seconds per run split into scoring and training. Right: total time relative to full data."""
    figure, (split_axes, ratio_axes) = new_figure(12, 4.4, ncols=2)
    names = list(results["runs"])
    scoring = np.array([results["runs"][name]["scoring_s"] for name in names])
    training = np.array([results["runs"][name]["training_s"] for name in names])
    split_axes.bar(names, training, label="training steps")
    split_axes.bar(names, scoring, bottom=training, label="per-epoch scoring")
    for position, name in enumerate(names):
        share = results["runs"][name]["scoring_share_of_epoch"]
        split_axes.annotate(f"{share:.1%}", (position, training[position] + scoring[position]), ha="center",
                            va="bottom", fontsize=7)  # fmt: skip
    split_axes.set_ylabel(f"seconds for {results['epochs']} epochs")
    split_axes.set_title("where the time goes (label: scoring share)")
    split_axes.legend(fontsize=8)
    full = results["runs"][results["reference"]]["total_s"]
    ratio_axes.bar(names, (training + scoring) / full, color="tab:green")
    ratio_axes.axhline(0.5, color="black", linestyle="--", label="half of full data")
    ratio_axes.axhline(0.6, color="red", linestyle=":", label="the claim's bound (−40 %)")
    ratio_axes.set_ylabel("total time / full-data time")
    ratio_axes.set_title(f"training time vs full data, {results['pool_size']:,} samples")
    ratio_axes.legend(fontsize=8)
    for axes in (split_axes, ratio_axes):
        axes.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=7)
        axes.grid(alpha=0.3, axis="y")
    save_figure(figure, path)


def run_selection_benchmarks(root: str | Path = ".", repeats: int = 3) -> dict:
    """Time every method at ratio 0.5 and full data on the clean pool; write dynamic_selection.{json,png}."""
    root = Path(root)
    params = load_section(DynamicSelectionParams, "dynamic_selection", root / "params.yaml")
    data, consistency = load_inputs(root, params)
    context = RunContext(params, data, 0.0, params.seeds[0], semantic_scores(consistency, 0.0), 0)
    reference = params.claims.full
    runs = [(label, 1.0 if label == reference else 0.5) for label in params.methods]
    results = {
        "pool_size": len(data.pool),
        "epochs": params.train.epochs,
        "repeats": repeats,
        "torch_threads": torch.get_num_threads(),
        "reference": f"{reference}@1",
        "runs": time_runs(context, runs, repeats),
    }
    full = results["runs"][results["reference"]]["total_s"]
    for entry in results["runs"].values():
        entry["time_vs_full"] = round(entry["total_s"] / full, 4)
    out = root / RESULTS_DIR
    write_json(results, out / "dynamic_selection.json")
    plot(results, out / "dynamic_selection.png")
    return results
