"""Step `dynamic_selection-consistency`: semantic consistency of every pool sample, per noise rate and source.

The class descriptions are embedded once by all-MiniLM-L6-v2 (offline). Two sources of scores:

- `held_out` (the CLIP stand-in, what the paper's method reads): the image → text projection is fitted once on
  the clean-labelled held-out split (disjoint from the pool, never noised) and scores every pool sample against
  its observed label; it never sees a pool label, as CLIP never saw the training labels.
- `label_filter` (the ablation): the projection is cross-fitted on each rate's observed (noisy) pool labels —
  a linear classifier on the labels it judges.

The report gives, per source and noise rate, how well the label probability separates flipped from clean
labels (AUROC), and the same with random unit vectors in place of the text embeddings (the control: if it
matches, the text semantics add nothing). The clean labels are read only for that report. The timings give
each source's precompute seconds per rate (text embedding + fitting + scoring), which count in the cost of
the methods that read the scores.
"""

from __future__ import annotations

import time

import numpy as np
import polars as pl
import torch
from sklearn.metrics import roc_auc_score

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_json, write_parquet
from stages.core.seeding import derive_seed
from stages.datasets.classification import to_arrays
from stages.datasets.text import embed_texts
from stages.methods.selection.dynamic.consistency import (
    ConsistencyResult,
    ProjectionConfig,
    class_descriptions,
    cross_fitted_consistency,
    held_out_consistency,
    random_texts,
)
from stages.papers.dynamic_selection.data import NoisyLabels, SelectionData, load_selection_data

SOURCES = ("held_out", "label_filter")


def consistency_frame(rate: float, source: str, result: ConsistencyResult) -> pl.DataFrame:
    """One (noise rate, source)'s scores as rows in pool order."""
    scores = result.scores
    n_rows = len(scores.consistency)
    return pl.DataFrame(
        {
            "noise_rate": np.full(n_rows, rate),
            "source": [source] * n_rows,
            "row": np.arange(n_rows, dtype=np.int64),
            "consistency": scores.consistency,
            "label_probability": scores.label_probability,
            "semantic_class": result.semantic_prediction,
        }
    )


def flipped_auroc(result: ConsistencyResult, labels: NoisyLabels) -> float | None:
    """AUROC of low label probability for flipped labels (None without flips)."""
    if not labels.flipped.any():
        return None
    return round(float(roc_auc_score(labels.flipped, -result.scores.label_probability)), 5)


def separation_report(result: ConsistencyResult, labels: NoisyLabels) -> dict:
    """How the scores relate to the truth: semantic accuracy on clean labels, flipped-vs-clean separation."""
    report = {
        "semantic_accuracy_clean": round(float(np.mean(result.semantic_prediction == labels.clean)), 5),
        "mean_consistency_clean": round(float(result.scores.consistency[~labels.flipped].mean()), 5),
        "logit_scale_mean": round(sum(result.logit_scales) / len(result.logit_scales), 3),
    }
    if labels.flipped.any():
        report["mean_consistency_flipped"] = round(float(result.scores.consistency[labels.flipped].mean()), 5)
        report["flipped_auroc"] = flipped_auroc(result, labels)
    return report


class Scorer:
    """Both sources' scores for one pool, given the class texts and the held-out split."""

    def __init__(self, data: SelectionData, held_out, texts: torch.Tensor, config: ProjectionConfig,
                 seed: int) -> None:  # fmt: skip
        standardize = data.standardize()
        self.images = standardize(data.features())
        self.reference = standardize(torch.from_numpy(held_out.features))
        self.reference_labels = torch.from_numpy(held_out.labels.astype(np.int64))
        self.texts, self.config, self.seed = texts, config, seed

    def score(self, source: str, labels: np.ndarray, rate: float, texts: torch.Tensor | None = None):
        """One source's result for the observed `labels` of noise rate `rate`."""
        texts = self.texts if texts is None else texts
        observed = torch.from_numpy(labels)
        if source == "held_out":
            seed = derive_seed(self.seed, "dynamic_selection", "projection", "held_out")
            return held_out_consistency(
                self.reference, self.reference_labels, self.images, observed, texts, self.config, seed
            )
        seed = derive_seed(self.seed, "dynamic_selection", "projection", rate)
        return cross_fitted_consistency(self.images, observed, texts, self.config, seed)


def run(ctx: StepContext) -> None:
    """Embed the class texts, score every noise rate with both sources, write scores, texts, report, timings."""
    params = ctx.params
    data = load_selection_data(ctx.input("pool"), ctx.input("test"), ctx.input("labels"))
    held_out = to_arrays(read_parquet(ctx.input("held_out")))
    descriptions = class_descriptions(
        params.dataset, params.class_descriptions, data.n_classes, "dynamic_selection.class_descriptions"
    )
    started = time.perf_counter()
    texts = embed_texts(descriptions)
    text_seconds = time.perf_counter() - started
    scorer = Scorer(data, held_out, torch.from_numpy(texts), params.projection, ctx.common.seed)
    control = random_texts(data.n_classes, texts.shape[1], derive_seed(ctx.common.seed, "random_texts"))
    frames, reports = [], {}
    precompute: dict[str, dict[str, float]] = {source: {} for source in SOURCES}
    for rate in params.noise_rates:
        labels = data.noisy(rate)
        for source in SOURCES:
            source_started = time.perf_counter()
            result = scorer.score(source, labels.observed, rate)
            seconds = text_seconds + time.perf_counter() - source_started
            precompute[source][str(rate)] = round(seconds, 3)
            report = separation_report(result, labels)
            if labels.flipped.any():
                report["flipped_auroc_random_texts"] = flipped_auroc(
                    scorer.score(source, labels.observed, rate, control), labels
                )
            reports.setdefault(str(rate), {})[source] = report
            frames.append(consistency_frame(rate, source, result))
            ctx.log(f"noise {rate:.0%} {source}: {report}")
    text_table = pl.DataFrame(
        {"class": np.arange(len(descriptions)), "description": descriptions}
    ).with_columns(pl.Series("embedding", texts, dtype=pl.Array(pl.Float32, texts.shape[1])))
    write_parquet(pl.concat(frames), ctx.output("consistency"))
    write_parquet(text_table, ctx.output("class_texts"))
    write_json(reports, ctx.output("report"))
    write_json(
        {
            "total_seconds": round(time.perf_counter() - started, 3),
            "text_seconds": round(text_seconds, 3),
            "precompute_seconds": precompute,
        },
        ctx.output("timings"),
    )
