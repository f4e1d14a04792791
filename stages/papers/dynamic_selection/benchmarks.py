"""Dynamic-selection benchmarks (`icml25 bench dynamic_selection`), measured side by side in one run.

On the pipeline's prepared pool (clean labels, its consistency scores) and its training recipe, every method
trains `repeats` times, each round in a seeded random order (`stages.core.timing.interleaved_seconds`), torch
fixed to `common.threads` (as the runner fixes it in the train step). Reported: medians of the per-epoch scoring, the
training steps and their augmentation; the consistency precompute (the pipeline's consistency timings); their
total, and the total at the claims ratio against full data (the reference). A second measurement times the
augmentation alone on one epoch at the method's augmented share, the old way (a call and a copy of the batch
per mini-batch) and the new way (one vectorised call on the epoch's gathered rows), as a share of the
method's training-step time.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np
import torch

from stages.core.errors import MissingSourceError
from stages.core.io import read_json, read_parquet, write_json
from stages.core.metrics import new_figure, save_figure
from stages.core.params import load_section, read_params_file
from stages.core.seeding import pin_threads
from stages.core.timing import interleaved_seconds, median_seconds
from stages.papers.dynamic_selection.data import SelectionData, load_selection_data
from stages.papers.dynamic_selection.params import DynamicSelectionParams
from stages.papers.dynamic_selection.timing import precompute_seconds
from stages.papers.dynamic_selection.train import RunContext, semantic_scores

RESULTS_DIR = Path("reports/benchmarks")
PIPELINE_DIR = Path("data/dynamic_selection")
INPUTS = ("pool.parquet", "test.parquet", "labels.parquet", "consistency.parquet", "timings/consistency.json")


def load_inputs(root: Path) -> tuple[SelectionData, object, dict]:
    """The prepared pool, consistency scores and their timings (run the pipeline's first two stages first)."""
    folder = root / PIPELINE_DIR
    needed = [folder / name for name in INPUTS]
    missing = [str(path) for path in needed if not path.is_file()]
    if missing:
        raise MissingSourceError(
            f"{', '.join(missing)} not found: run `dvc repro dynamic_selection-consistency`"
        )
    return load_selection_data(*needed[:3]), read_parquet(needed[3]), read_json(needed[4])


def time_runs(context: RunContext, runs: list[tuple[str, float]], repeats: int, timings: dict) -> dict:
    """Per (method, ratio): medians over repeats (seeded random order each round) of every part of the cost."""
    measured: dict[str, list[dict]] = {f"{label}@{ratio:g}": [] for label, ratio in runs}

    def one(label: str, ratio: float):
        def call() -> None:
            _, records = context.train(label, ratio)
            measured[f"{label}@{ratio:g}"].append(
                {
                    "scoring_s": sum(record.scoring_seconds for record in records),
                    "training_s": sum(record.training_seconds for record in records),
                    "augment_s": sum(record.augment_seconds for record in records),
                    "augmented_share": sum(record.n_augmented for record in records)
                    / sum(record.n_kept for record in records),
                }
            )

        return call

    interleaved_seconds(
        {f"{label}@{ratio:g}": one(label, ratio) for label, ratio in runs}, repeats, warmup=False
    )
    results = {}
    for (label, _), (name, samples) in zip(runs, measured.items(), strict=True):
        parts = {key: statistics.median(sample[key] for sample in samples) for key in samples[0]}
        precompute = precompute_seconds(context.params, label, context.rate, timings)
        total = parts["scoring_s"] + parts["training_s"] + precompute
        results[name] = {
            **{key: round(value, 4) for key, value in parts.items() if key != "augmented_share"},
            "precompute_s": round(precompute, 3),
            "total_s": round(total, 4),
            "scoring_share_of_epoch": round(
                parts["scoring_s"] / (parts["scoring_s"] + parts["training_s"]), 4
            ),
            "augment_share_of_training": round(parts["augment_s"] / parts["training_s"], 4),
            "augmented_share": round(parts["augmented_share"], 4),
        }
    return results


def augmentation_cost(context: RunContext, share: float, repeats: int) -> dict:
    """One epoch's augmentation of a random `share` of the kept samples at the claims ratio: per mini-batch with
    a copy of the batch (the old loop) vs one vectorised call on the epoch's gathered rows (the new one)."""
    rng = np.random.default_rng(0)
    n_samples = len(context.data.pool)
    order = torch.from_numpy(rng.permutation(n_samples)[: round(context.params.claims.ratio * n_samples)])
    mask = torch.from_numpy(rng.random(len(order)) < share)
    generator = torch.Generator().manual_seed(0)
    batch_size = context.params.train.batch_size
    features = context.features

    def per_batch() -> None:
        for batch in torch.arange(len(order)).split(batch_size):
            rows = features[order[batch]]
            chosen = rows[mask[batch]]
            if len(chosen):
                out = rows.clone()  # the old Augmenter copied every batch before writing the augmented rows
                out[mask[batch]] = context.augmenter.transform(chosen, generator)

    def per_epoch() -> None:
        rows = features[order]
        context.augmenter(rows, mask, generator)

    old, _ = median_seconds(per_batch, repeats)
    new, _ = median_seconds(per_epoch, repeats)
    return {
        "routed_share": share,
        "samples": len(order),
        "per_batch_s": round(old, 4),
        "per_epoch_s": round(new, 4),
    }


def plot(results: dict, path: Path) -> None:
    """Left: seconds per run split into precompute, scoring and training. Right: total relative to full data."""
    figure, (split_axes, ratio_axes) = new_figure(12, 4.4, ncols=2)
    names = list(results["runs"])
    parts = {key: np.array([results["runs"][name][key] for name in names])
             for key in ("training_s", "scoring_s", "precompute_s")}  # fmt: skip
    bottom = np.zeros(len(names))
    for key, label in (("training_s", "training steps"), ("scoring_s", "per-epoch scoring"),
                       ("precompute_s", "consistency precompute")):  # fmt: skip
        split_axes.bar(names, parts[key], bottom=bottom, label=label)
        bottom += parts[key]
    split_axes.set_ylabel(f"seconds for {results['epochs']} epochs")
    split_axes.set_title(f"where the time goes ({results['torch_threads']} torch thread(s), medians)")
    split_axes.legend(fontsize=8)
    full = results["runs"][results["reference"]]["total_s"]
    ratio_axes.bar(names, bottom / full, color="tab:green")
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
    """Time every method at the claims ratio and full data on the clean pool; write dynamic_selection.{json,png}."""
    root = Path(root)
    params = load_section(DynamicSelectionParams, "dynamic_selection", root / "params.yaml")
    threads = int(read_params_file(root / "params.yaml").get("common", {}).get("threads", 2))
    data, consistency, timings = load_inputs(root)
    context = RunContext(params, data, 0.0, params.seeds[0], semantic_scores(consistency, 0.0), 0)
    reference = params.claims.full
    runs = [
        (label, 1.0 if label == reference else params.claims.ratio)
        for label in params.methods
        if params.runs_at(label, 0.0)
    ]
    pin_threads(threads)
    timed = time_runs(context, runs, repeats, timings)
    method = timed[f"{params.claims.method}@{params.claims.ratio:g}"]
    results = {
        "pool_size": len(data.pool),
        "epochs": params.train.epochs,
        "repeats": repeats,
        "torch_threads": threads,
        "order": "seeded random permutation per round",
        "reference": f"{reference}@1",
        "runs": timed,
        "augmentation_one_epoch": augmentation_cost(context, method["augmented_share"], repeats),
    }
    full = results["runs"][results["reference"]]["total_s"]
    for entry in results["runs"].values():
        entry["time_vs_full"] = round(entry["total_s"] / full, 4)
    training = method["training_s"] / params.train.epochs
    augmentation = results["augmentation_one_epoch"]
    augmentation["per_batch_share_of_training"] = round(augmentation["per_batch_s"] / training, 4)
    augmentation["per_epoch_share_of_training"] = round(augmentation["per_epoch_s"] / training, 4)
    out = root / RESULTS_DIR
    write_json(results, out / "dynamic_selection.json")
    plot(results, out / "dynamic_selection.png")
    return results
