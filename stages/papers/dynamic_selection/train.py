"""Step `dynamic_selection-train`: every noise rate × seed × method × ratio, trained with the dynamic sampler.

All methods of one (noise rate, seed) share the model initialisation; they run in an order shuffled per
(noise rate, seed) (seeded), so that load drifting over the run does not always hit the same method last
(torch fixed to `common.threads` threads by the runner). Writes one row per run (final test accuracy,
how often flipped and clean samples were trained on, what was suppressed), one row per epoch, and the
wall-clock timings per epoch (kept apart in `timings/`, read only by the benchmark step
`dynamic_selection-timing`, so the data outputs are byte-identical across reruns).
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import polars as pl
import torch

from stages.core.context import StepContext
from stages.core.evaluation import CLASSIFICATION
from stages.core.io import read_parquet, write_json, write_parquet
from stages.core.progress import progress
from stages.core.seeding import derive_seed
from stages.methods.selection.dynamic.augment import Augmenter
from stages.methods.selection.dynamic.registry import make_selection_method
from stages.methods.selection.dynamic.sampler import DynamicSampler
from stages.methods.selection.dynamic.stats import SampleStats, SemanticScores
from stages.methods.selection.dynamic.training import EpochRecord, train_with_sampler
from stages.models.training import build_model, predict
from stages.papers.dynamic_selection.data import NoisyLabels, SelectionData, load_selection_data
from stages.papers.dynamic_selection.params import DynamicSelectionParams


def semantic_scores(consistency: pl.DataFrame, rate: float) -> SemanticScores:
    """The consistency step's scores for noise rate `rate`, in pool row order."""
    block = consistency.filter(pl.col("noise_rate") == rate).sort("row")
    return SemanticScores(block["consistency"].to_numpy(), block["label_probability"].to_numpy())


def shuffled_plan(plan: list[tuple], seed: int) -> list[tuple]:
    """`plan` (rate, seed, label, ratio) with the runs of each (rate, seed) in a seeded random order."""
    groups: dict[tuple, list[tuple]] = {}
    for item in plan:
        groups.setdefault(item[:2], []).append(item)
    shuffled = []
    for key, items in groups.items():
        order = np.random.default_rng(derive_seed(seed, "dynamic_selection", "order", *key)).permutation(
            len(items)
        )
        shuffled += [items[index] for index in order]
    return shuffled


def noise_selection(sampler: DynamicSampler, labels: NoisyLabels, epochs: int) -> dict:
    """How often flipped and clean samples were trained on, and how well suppression caught the flips."""
    rate = sampler.stats.times_selected / epochs
    suppressed = sampler.plan.suppressed if sampler.plan is not None else np.empty(0, np.int64)
    caught = int(labels.flipped[suppressed].sum())
    return {
        "clean_selection_rate": float(rate[~labels.flipped].mean()),
        "flipped_selection_rate": float(rate[labels.flipped].mean()) if labels.flipped.any() else None,
        "n_suppressed": len(suppressed),
        "suppressed_flipped": caught,
        "suppression_precision": caught / len(suppressed) if len(suppressed) else None,
        "suppression_recall": caught / int(labels.flipped.sum()) if labels.flipped.any() else None,
    }


KEY = ("noise_rate", "seed", "method", "ratio")


class RunContext:
    """What every run of one (noise rate, seed) shares: data, labels, scores, augmenter, seeds."""

    def __init__(self, params: DynamicSelectionParams, data: SelectionData, rate: float, seed: int,
                 semantic: SemanticScores, base_seed: int) -> None:  # fmt: skip
        self.params, self.data, self.rate, self.seed, self.semantic = params, data, rate, seed, semantic
        self.labels = data.noisy(rate)
        self.features = data.features()
        self.standardize = data.standardize(params.train.architecture)
        self.test_inputs = self.standardize(torch.from_numpy(data.test.features))
        self.augmenter = Augmenter(
            params.augmentation,
            self.features.shape[1],
            self.features.std(dim=0),
            "dynamic_selection.augmentation",
        )
        self.run_seed = derive_seed(base_seed, "dynamic_selection", rate, seed)

    def test_accuracy(self, model: torch.nn.Module) -> float:
        """Accuracy on the untouched test split."""
        predicted = predict(model, self.test_inputs)
        return CLASSIFICATION.evaluate(self.data.test.labels, predicted=predicted)["accuracy"]

    def train(self, label: str, ratio: float) -> tuple[dict, list[EpochRecord]]:
        """One run: a fresh model (same initialisation for every method) trained with this method's sampler."""
        entry = self.params.methods[label]
        method = make_selection_method(
            entry.method, entry.options, key=f"dynamic_selection.methods.{label}.options"
        )
        sampler = DynamicSampler(
            method,
            SampleStats(self.labels.observed, self.semantic),
            ratio,
            derive_seed(self.run_seed, label, ratio),
            epochs=self.params.train.epochs,
        )
        model = build_model(self.features.shape[1], self.data.n_classes, self.params.train, self.run_seed)
        records = train_with_sampler(
            model, self.features, torch.from_numpy(self.labels.observed), sampler, self.params.train,
            self.standardize, self.augmenter, derive_seed(self.run_seed, "augment"), self.test_accuracy,
            augment=entry.augment, augment_share=entry.augment_share, evaluate_every_epoch=False,
        )  # fmt: skip
        row = {
            "noise_rate": self.rate, "seed": self.seed, "method": label, "ratio": ratio,
            "accuracy": records[-1].test_accuracy, "samples_trained": sum(record.n_kept for record in records),
            "samples_augmented": sum(record.n_augmented for record in records),
            **noise_selection(sampler, self.labels, self.params.train.epochs),
        }  # fmt: skip
        return row, records


def epoch_rows(key: dict, records: list[EpochRecord]) -> list[dict]:
    """Per-epoch rows without the timings (those go to the timings file)."""
    timing_fields = ("scoring_seconds", "training_seconds", "augment_seconds")
    return [
        {**key, **{name: value for name, value in asdict(record).items() if name not in timing_fields}}
        for record in records
    ]


def timing_entry(key: dict, records: list[EpochRecord]) -> dict:
    """A run's wall-clock seconds: scoring (per-epoch selection), training steps (augmentation included, also
    given apart) and n_kept per epoch, and the total of scoring and training."""
    scoring = [round(record.scoring_seconds, 5) for record in records]
    training = [round(record.training_seconds, 5) for record in records]
    return {
        **key,
        "n_kept": [record.n_kept for record in records],
        "scoring_seconds": scoring,
        "training_seconds": training,
        "augment_seconds": [round(record.augment_seconds, 5) for record in records],
        "total_seconds": sum(scoring) + sum(training),
    }


def run(ctx: StepContext) -> None:
    """Train every configured run in the shuffled order and write runs, epochs and timings."""
    params = ctx.params
    data = load_selection_data(ctx.input("pool"), ctx.input("test"), ctx.input("labels"))
    consistency = read_parquet(ctx.input("consistency"))
    canonical = [
        (rate, seed, label, ratio)
        for rate in params.noise_rates
        for seed in params.seeds
        for label, ratio in params.runs(rate)
    ]
    plan = shuffled_plan(canonical, ctx.common.seed)
    runs, epochs, timings = [], [], []
    shared: RunContext | None = None
    for rate, seed, label, ratio in progress(plan, desc="dynamic selection runs", leave=True):
        if shared is None or (shared.rate, shared.seed) != (rate, seed):
            shared = RunContext(params, data, rate, seed, semantic_scores(consistency, rate), ctx.common.seed)
        row, records = shared.train(label, ratio)
        key = {"noise_rate": rate, "seed": seed, "method": label, "ratio": ratio}
        runs.append(row)
        epochs += epoch_rows(key, records)
        timings.append(timing_entry(key, records))
        ctx.log(
            f"noise {rate:.0%} seed {seed} {label:>32} @ {ratio:.2f}: acc {row['accuracy']:.4f}, "
            f"{timings[-1]['total_seconds']:.2f}s, suppressed {row['n_suppressed']}"
        )
    position = {item: index for index, item in enumerate(canonical)}
    runs.sort(key=lambda row: position[tuple(row[name] for name in KEY)])
    epochs.sort(key=lambda row: (position[tuple(row[name] for name in KEY)], row["epoch"]))
    timings.sort(key=lambda row: position[tuple(row[name] for name in KEY)])
    write_parquet(pl.DataFrame(runs, infer_schema_length=None), ctx.output("runs"))
    write_parquet(pl.DataFrame(epochs, infer_schema_length=None), ctx.output("epochs"))
    write_json({"runs": timings}, ctx.output("timings"))
