"""Step `dynamic_selection-consistency`: semantic consistency of every pool sample, per noise rate.

The class descriptions are embedded once by all-MiniLM-L6-v2 (offline). A linear image → text projection is
learned CLIP-style on the pool's observed (noisy) labels and cross-fitted: each sample is scored by a
projection fitted on the other folds, so no sample judges its own label and no method sees a clean label
(the paper's CLIP consistency uses no clean labels either). The projection is a stand-in for CLIP, not
multimodal evidence: it is a linear classifier on the observed labels (a label filter) in the text space.

The report gives, per noise rate, how well the label probability separates flipped from clean labels (AUROC),
and the same with random unit vectors in place of the text embeddings (the control: if it matches, the text
semantics add nothing). The clean labels are read only for that report. The timings give the precompute
seconds per rate (text embedding + fitting + scoring), which count in the cost of the methods that read the
scores.
"""

from __future__ import annotations

import time

import numpy as np
import polars as pl
import torch
from sklearn.metrics import roc_auc_score

from stages.core.context import StepContext
from stages.core.io import write_json, write_parquet
from stages.core.seeding import derive_seed
from stages.datasets.text import embed_texts
from stages.methods.selection.dynamic.consistency import (
    ConsistencyResult,
    class_descriptions,
    cross_fitted_consistency,
    random_texts,
)
from stages.papers.dynamic_selection.data import NoisyLabels, load_selection_data


def consistency_frame(rate: float, result: ConsistencyResult) -> pl.DataFrame:
    """One noise rate's scores as rows in pool order."""
    scores = result.scores
    n_rows = len(scores.consistency)
    return pl.DataFrame(
        {
            "noise_rate": np.full(n_rows, rate),
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


def run(ctx: StepContext) -> None:
    """Embed the class texts, cross-fit and score every noise rate, write scores, texts, report, timings."""
    params = ctx.params
    data = load_selection_data(ctx.input("pool"), ctx.input("test"), ctx.input("labels"))
    descriptions = class_descriptions(
        params.dataset, params.class_descriptions, data.n_classes, "dynamic_selection.class_descriptions"
    )
    started = time.perf_counter()
    texts = embed_texts(descriptions)
    text_seconds = time.perf_counter() - started
    images = data.standardize()(data.features())
    control = random_texts(data.n_classes, texts.shape[1], derive_seed(ctx.common.seed, "random_texts"))
    frames, reports, precompute = [], {}, {}
    for rate in params.noise_rates:
        labels = data.noisy(rate)
        observed = torch.from_numpy(labels.observed)
        seed = derive_seed(ctx.common.seed, "dynamic_selection", "projection", rate)
        rate_started = time.perf_counter()
        result = cross_fitted_consistency(images, observed, torch.from_numpy(texts), params.projection, seed)
        precompute[str(rate)] = round(text_seconds + time.perf_counter() - rate_started, 3)
        report = separation_report(result, labels)
        if labels.flipped.any():
            report["flipped_auroc_random_texts"] = flipped_auroc(
                cross_fitted_consistency(images, observed, control, params.projection, seed), labels
            )
        reports[str(rate)] = report
        frames.append(consistency_frame(rate, result))
        ctx.log(f"noise {rate:.0%}: {report}")
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
