"""Macro AUROC over the classes a test set can score (≥ `min_positives` positives and ≥ 1 negative), and the
per-class values; a class absent from a test set is excluded and named, never scored 0.5."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def auroc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Binary AUROC by the Mann–Whitney rank statistic (ties get average ranks)."""
    from scipy.stats import rankdata

    labels = labels.astype(bool)
    positives, negatives = int(labels.sum()), int((~labels).sum())
    if positives == 0 or negatives == 0:
        return float("nan")
    ranks = rankdata(scores)
    return float((ranks[labels].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def per_class_auroc(
    scores: np.ndarray, labels: np.ndarray, classes: Sequence[str], min_positives: int = 1
) -> dict[str, float]:
    """AUROC per scorable class (the others left out)."""
    out = {}
    for index, name in enumerate(classes):
        column = labels[:, index]
        if column.sum() >= min_positives and column.sum() < len(column):
            out[name] = auroc(scores[:, index], column)
    return out


def macro_auroc(
    scores: np.ndarray, labels: np.ndarray, classes: Sequence[str], min_positives: int = 1
) -> float:
    """Mean AUROC over the scorable classes (NaN when none is)."""
    values = per_class_auroc(scores, labels, classes, min_positives)
    return float(np.mean(list(values.values()))) if values else float("nan")
