"""Rationale metrics on plain arrays: precision/recall/F1 against annotations, sparsity, the per-class
selection-rate gap of label-independent tokens, the per-class share of rationales without a label-bearing token
(the sampling bias), accuracy and attack success (pooled and per class)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

import numpy as np


def _flat(rows: Sequence[np.ndarray]) -> np.ndarray:
    return (
        np.concatenate([np.asarray(row, dtype=np.float64).ravel() for row in rows])
        if len(rows)
        else np.zeros(0)
    )


def rationale_prf(selected: Sequence[np.ndarray], gold: Sequence[np.ndarray]) -> dict[str, float]:
    """Micro precision, recall and F1 of 0/1 selections against 0/1 annotations (per row, real units only).

    Precision is 0 when nothing is selected, recall 0 when nothing is annotated, F1 0 when both are 0.
    """
    z, g = _flat(selected), _flat(gold)
    if z.shape != g.shape:
        raise ValueError(f"selections cover {z.size} units, annotations {g.size}")
    hits = float((z * g).sum())
    precision = hits / z.sum() if z.sum() > 0 else 0.0
    recall = hits / g.sum() if g.sum() > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def sparsity(selected: Sequence[np.ndarray]) -> float:
    """Selected units / all real units."""
    z = _flat(selected)
    return float(z.mean()) if z.size else 0.0


def accuracy(predicted: np.ndarray, labels: np.ndarray) -> float:
    """Share of rows whose predicted class is the label."""
    return float(np.mean(np.asarray(predicted) == np.asarray(labels)))


def attack_success(attacked_predictions: np.ndarray, labels: np.ndarray) -> float:
    """Share of rows where the predictor, reading the attacker's rationale, outputs 1 − Y (chance: 1/2)."""
    return float(np.mean(np.asarray(attacked_predictions) == 1 - np.asarray(labels)))


def attack_success_by_class(attacked_predictions: np.ndarray, labels: np.ndarray) -> dict[int, float]:
    """Per class c, the share of its rows the attacker flips to 1 − c (NaN for a class with no rows).

    Pooled attack success over a balanced set hides a predictor that defaults to one class: it is flipped on
    every row of the other class and on none of its own, 1.0 / 0.0 per class and 0.5 pooled."""
    attacked, labels = np.asarray(attacked_predictions), np.asarray(labels)
    return {
        label: float(np.mean(attacked[labels == label] == 1 - label))
        if (labels == label).any()
        else float("nan")
        for label in (0, 1)
    }


def share_without_label_token(
    selected: Sequence[np.ndarray],
    tokens: Sequence[Sequence[str]],
    labels: np.ndarray,
    bearing: Mapping[int, Collection[str]],
) -> dict[int, float]:
    """Per class c, the share of its rows whose rationale holds no token of `bearing[c]` (the label-bearing
    words of class c); NaN for a class with no rows. A generator with sampling bias leaves them out of one
    class's rationales (the predictor then reads "no evidence" as that class)."""
    shares = {}
    for label in (0, 1):
        rows = [
            not any(z_t and t in bearing[label] for z_t, t in zip(np.asarray(z), text, strict=False))
            for z, text, y in zip(selected, tokens, labels, strict=True)
            if y == label
        ]
        shares[label] = float(np.mean(rows)) if rows else float("nan")
    return shares


def selection_rates(
    selected: Sequence[np.ndarray], tokens: Sequence[Sequence[str]], labels: np.ndarray, token: str
) -> dict[int, float]:
    """Per class c, P(a `token` occurrence is selected | Y = c) (NaN for a class where it never occurs)."""
    rates = {}
    for label in (0, 1):
        chosen = occurrences = 0.0
        for z, text, y in zip(selected, tokens, labels, strict=True):
            if y != label:
                continue
            hits = np.array([t == token for t in text[: len(z)]], dtype=bool)
            occurrences += hits.sum()
            chosen += float(np.asarray(z)[: len(hits)][hits].sum())
        rates[label] = chosen / occurrences if occurrences else float("nan")
    return rates


def selection_gap(
    selected: Sequence[np.ndarray],
    tokens: Sequence[Sequence[str]],
    labels: np.ndarray,
    independent: Iterable[str],
) -> dict[str, float]:
    """|P(selected | Y = 1) − P(selected | Y = 0)| per label-independent token, and `max` over them."""
    gaps = {}
    for token in independent:
        rates = selection_rates(selected, tokens, labels, token)
        gaps[token] = abs(rates[1] - rates[0]) if not np.isnan([rates[0], rates[1]]).any() else float("nan")
    finite = [gap for gap in gaps.values() if not np.isnan(gap)]
    return {**gaps, "max": max(finite) if finite else float("nan")}
