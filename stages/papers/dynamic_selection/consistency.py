"""Step `dynamic_selection-consistency`: semantic consistency of every pool sample, per noise rate.

The class descriptions are embedded once by all-MiniLM-L6-v2 (offline); for each noise rate the image → text
projection is learned on that rate's observed labels (the noisy ones: nothing else is known at training time)
and every sample is scored out of fold. The clean labels are read only to report how well the scores separate
flipped from clean samples.
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
)
from stages.papers.dynamic_selection.data import NoisyLabels, load_selection_data


def consistency_frame(rate: float, result: ConsistencyResult) -> pl.DataFrame:
    """One noise rate's scores as rows in pool order."""
    scores = result.scores
    return pl.DataFrame(
        {
            "noise_rate": np.full(len(scores.consistency), rate),
            "row": np.arange(len(scores.consistency), dtype=np.int64),
            "consistency": scores.consistency,
            "label_probability": scores.label_probability,
            "semantic_class": result.semantic_prediction,
        }
    )


def separation_report(result: ConsistencyResult, labels: NoisyLabels) -> dict:
    """How the scores relate to the truth: semantic accuracy on clean labels, flipped-vs-clean separation."""
    report = {
        "semantic_accuracy_clean": round(float(np.mean(result.semantic_prediction == labels.clean)), 5),
        "mean_consistency_clean": round(float(result.scores.consistency[~labels.flipped].mean()), 5),
        "logit_scale_mean": round(sum(result.logit_scales) / len(result.logit_scales), 3),
    }
    if labels.flipped.any():
        report["mean_consistency_flipped"] = round(float(result.scores.consistency[labels.flipped].mean()), 5)
        report["flipped_auroc"] = round(
            float(roc_auc_score(labels.flipped, -result.scores.label_probability)), 5
        )
    return report


def run(ctx: StepContext) -> None:
    """Embed the class texts, score every noise rate, write scores, texts, report and timing."""
    params = ctx.params
    data = load_selection_data(ctx.input("pool"), ctx.input("test"), ctx.input("labels"))
    descriptions = class_descriptions(
        params.dataset, params.class_descriptions, data.n_classes, "dynamic_selection.class_descriptions"
    )
    started = time.perf_counter()
    texts = embed_texts(descriptions)
    images = data.standardize()(data.features())
    frames, reports, seconds = [], {}, {}
    for rate in params.noise_rates:
        labels = data.noisy(rate)
        rate_started = time.perf_counter()
        result = cross_fitted_consistency(
            images, torch.from_numpy(labels.observed), torch.from_numpy(texts), params.projection,
            derive_seed(ctx.common.seed, "dynamic_selection", "projection", rate),
        )  # fmt: skip
        seconds[str(rate)] = round(time.perf_counter() - rate_started, 3)
        reports[str(rate)] = separation_report(result, labels)
        frames.append(consistency_frame(rate, result))
        ctx.log(f"noise {rate:.0%}: {reports[str(rate)]}")
    text_table = pl.DataFrame(
        {"class": np.arange(len(descriptions)), "description": descriptions}
    ).with_columns(pl.Series("embedding", texts, dtype=pl.Array(pl.Float32, texts.shape[1])))
    write_parquet(pl.concat(frames), ctx.output("consistency"))
    write_parquet(text_table, ctx.output("class_texts"))
    write_json(reports, ctx.output("report"))
    write_json(
        {"total_seconds": round(time.perf_counter() - started, 3), "per_noise_rate": seconds},
        ctx.output("timings"),
    )
