"""A2I benchmarks (`icml25 bench a2i`): training throughput (samples/s) of RNP and of RNP + A2I on text and on
graphs, in one run: one epoch per call, one torch thread, the contenders interleaved in a seeded random order,
median of `repeats`; the ratio A2I / RNP per modality (A2I adds one predictor pass on the attacker's rationale
per batch). Writes reports/benchmarks/a2i.json."""

from __future__ import annotations

import statistics
from pathlib import Path

import torch

from stages.core.io import write_json
from stages.core.timing import interleaved_seconds
from stages.datasets.rationales.motifs import MotifParams
from stages.datasets.rationales.reviews import ReviewParams, generate_reviews
from stages.methods.rationale.config import RationaleConfig
from stages.methods.rationale.encoders import get_encoder
from stages.methods.rationale.trainer import train_rationalizer
from stages.papers.a2i.data import graph_splits, text_splits
from stages.papers.a2i.prepare import graph_table

RESULTS_DIR = Path("reports/benchmarks")


def workloads() -> dict[str, tuple[str, object]]:
    """Training sets of the default sizes: 1,000 reviews of 30 tokens, 700 motif graphs."""
    reviews = text_splits(generate_reviews(ReviewParams(n_train=1000, n_dev=2, n_test=2), 0), 32, 0, 38)
    graphs = graph_splits(graph_table(MotifParams(n_train=700, n_dev=2, n_test=2), 0))
    return {"text": ("gru", reviews["train"]), "graphs": ("gcn", graphs["train"])}


def run_benchmarks(repeats: int = 3) -> dict:
    """Samples/s of one training epoch, RNP vs A2I, text and graphs."""
    torch.set_num_threads(1)
    config = RationaleConfig(
        hidden=32, epochs=1, batch_size=32, lr=5e-3, sparsity_weight=2.4, continuity_weight=2.0
    )
    calls, sizes = {}, {}
    for modality, (encoder, train) in workloads().items():
        sizes[modality] = len(train)
        for objective in ("rnp", "a2i"):
            calls[f"{modality}/{objective}"] = lambda e=encoder, t=train, o=objective: train_rationalizer(
                get_encoder(e), t, None, config, o, 0
            )
    seconds = interleaved_seconds(calls, repeats=repeats, seed=0)
    result: dict = {
        "threads": 1,
        "repeats": repeats,
        "epoch_rows": sizes,
        "samples_per_second": {},
        "a2i_over_rnp": {},
    }
    for name, times in seconds.items():
        modality = name.split("/")[0]
        result["samples_per_second"][name] = round(sizes[modality] / statistics.median(times), 1)
    for modality in sizes:
        rate = result["samples_per_second"]
        result["a2i_over_rnp"][modality] = round(rate[f"{modality}/a2i"] / rate[f"{modality}/rnp"], 3)
    write_json(result, RESULTS_DIR / "a2i.json")
    return result
