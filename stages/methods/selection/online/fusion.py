"""Info-Coevolution's confidence rules: model view, dataset (kNN) view, and their Bayesian fusion.

Confidences are normalised so that a uniform prediction scores 0 and a one-hot prediction 1:
c = (max p − 1/K) / (1 − 1/K). The dataset view of a sample is a vote of its neighbours within a cosine
radius, each weighted by its confidence × cosine similarity. Two views that agree reinforce each other
(both above 0.5: xy / (xy + (1−x)(1−y))); views that disagree keep the more confident class with its
confidence decayed by the other's (x(1−y) / (x(1−y) + (1−x)y)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Views:
    """Predicted class and normalised confidence per sample."""

    classes: np.ndarray
    confidences: np.ndarray


def model_view(probabilities: np.ndarray) -> Views:
    """Arg-max class and normalised confidence (max p − 1/K)/(1 − 1/K) of each row of softmax outputs."""
    n_classes = probabilities.shape[1]
    if n_classes < 2:
        raise ValueError("the model view needs at least two classes")
    top = probabilities.max(axis=1)
    confidences = (top - 1.0 / n_classes) / (1.0 - 1.0 / n_classes)
    return Views(probabilities.argmax(axis=1).astype(np.int64), np.clip(confidences, 0.0, 1.0))


def dataset_view(
    neighbour_ids: np.ndarray,
    neighbour_distances: np.ndarray,
    classes: np.ndarray,
    confidences: np.ndarray,
    n_classes: int,
    radius: float,
) -> Views:
    """Confidence × similarity weighted vote of the neighbours within cosine distance `radius`.

    `neighbour_ids`/`neighbour_distances` are (n, k); `classes`/`confidences` describe every pool sample
    (labelled ones with their annotation and confidence 1). A sample without neighbours in the radius gets
    class 0 with confidence 0, so fusion then keeps the model view alone.
    """
    within = neighbour_distances <= radius
    weights = np.where(within, confidences[neighbour_ids] * (1.0 - neighbour_distances), 0.0)
    votes = np.zeros((len(neighbour_ids), n_classes))
    rows = np.repeat(np.arange(len(neighbour_ids)), neighbour_ids.shape[1])
    np.add.at(votes, (rows, classes[neighbour_ids].ravel()), weights.ravel())
    total = votes.sum(axis=1)
    winner = votes.argmax(axis=1)
    share = np.divide(votes.max(axis=1), total, out=np.zeros_like(total), where=total > 0)
    return Views(np.where(total > 0, winner, 0).astype(np.int64), share)


def fuse(first: Views, second: Views) -> Views:
    """Fuse two views per sample (symmetric in its arguments).

    Agreeing views: the larger confidence x and smaller y give xy/(xy + (1−x)(1−y)) when y > 0.5, else x.
    Disagreeing views: the more confident view's class, with x(1−y)/(x(1−y) + (1−x)y) when y > 0.5, else x.
    Two certain views that disagree (x = y = 1) leave the sample at confidence 0.5.
    """
    x = np.maximum(first.confidences, second.confidences)
    y = np.minimum(first.confidences, second.confidences)
    agree = first.classes == second.classes
    winner = np.where(first.confidences >= second.confidences, first.classes, second.classes)
    agree_num, agree_den = x * y, x * y + (1 - x) * (1 - y)
    clash_num, clash_den = x * (1 - y), x * (1 - y) + (1 - x) * y
    numerator = np.where(agree, agree_num, clash_num)
    denominator = np.where(agree, agree_den, clash_den)
    combined = np.divide(numerator, denominator, out=np.full_like(x, 0.5), where=denominator > 0)
    confidences = np.where(y > 0.5, combined, x)
    return Views(winner.astype(np.int64), confidences)


def confidence_gain(confidences: np.ndarray) -> np.ndarray:
    """What annotating a sample would add: max(0, 1 − fused confidence)."""
    return np.maximum(0.0, 1.0 - confidences)
