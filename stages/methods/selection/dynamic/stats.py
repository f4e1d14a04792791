"""What the sampler knows about every sample: its label, the loss and embedding of its last training pass, and
(optionally) its semantic-consistency scores. Recorded from the training forward pass, so no extra pass."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stages.core.errors import PipelineError


@dataclass(frozen=True)
class SemanticScores:
    """Per-sample image–text agreement: cosine to the label's text and the label's softmax probability among all
    class texts (at the projection's learned temperature)."""

    consistency: np.ndarray
    label_probability: np.ndarray

    def __post_init__(self) -> None:
        if self.consistency.shape != self.label_probability.shape or self.consistency.ndim != 1:
            raise PipelineError(
                f"semantic scores: consistency {self.consistency.shape} and label_probability "
                f"{self.label_probability.shape} must be 1-D arrays of the same length"
            )


class SampleStats:
    """Per-sample training statistics, stale for samples not trained on lately (as in InfoBatch)."""

    def __init__(self, labels: np.ndarray, semantic: SemanticScores | None = None) -> None:
        self.labels = np.asarray(labels, dtype=np.int64)
        n_samples = len(self.labels)
        if semantic is not None and len(semantic.consistency) != n_samples:
            raise PipelineError(
                f"semantic scores have {len(semantic.consistency)} rows but there are {n_samples} samples"
            )
        self.semantic = semantic
        self.loss = np.full(n_samples, np.nan, dtype=np.float32)
        self.embeddings: np.ndarray | None = None
        self.seen = np.zeros(n_samples, dtype=bool)
        self.times_selected = np.zeros(n_samples, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.labels)

    def record(self, indices: np.ndarray, losses: np.ndarray, embeddings: np.ndarray | None = None) -> None:
        """Store the per-sample losses (and embeddings) of one training batch.

        `indices`: the batch's b sample indices in 0..n−1; `losses`: b finite per-sample losses (reduction
        "none"); `embeddings`: optional b × e features, e the same on every call. A mismatch stops with a
        `PipelineError` naming both lengths; nothing is stored then.
        """
        indices, losses = np.asarray(indices), np.asarray(losses, dtype=np.float32)
        check_batch(indices, losses, embeddings, len(self), self.embeddings)
        indices = indices.astype(np.int64)
        self.loss[indices] = losses
        if embeddings is not None:
            if self.embeddings is None:
                self.embeddings = np.zeros((len(self), embeddings.shape[1]), dtype=np.float32)
            self.embeddings[indices] = embeddings
        self.seen[indices] = True


def check_batch(
    indices: np.ndarray,
    losses: np.ndarray,
    embeddings: np.ndarray | None,
    n_samples: int,
    stored: np.ndarray | None,
) -> None:
    """Fail clearly when a recorded batch does not fit: lengths, index range, non-finite losses, widths."""
    if indices.ndim != 1 or not np.issubdtype(indices.dtype, np.integer):
        raise PipelineError(
            f"record: indices must be a 1-D integer array, got shape {indices.shape} {indices.dtype}"
        )
    if losses.shape != indices.shape:
        given = f"{len(losses)} losses" if losses.ndim == 1 else f"losses of shape {losses.shape}"
        raise PipelineError(
            f'record: {len(indices)} indices but {given}; give one loss per index (reduction="none")'
        )
    if len(indices) and (indices.min() < 0 or indices.max() >= n_samples):
        raise PipelineError(
            f"record: indices span {indices.min()}..{indices.max()} but there are {n_samples} samples "
            f"(0..{n_samples - 1})"
        )
    if not np.isfinite(losses).all():
        raise PipelineError(
            f"record: {int((~np.isfinite(losses)).sum())} of {len(losses)} losses are NaN or infinite"
        )
    if embeddings is None:
        return
    if embeddings.ndim != 2 or len(embeddings) != len(indices):
        raise PipelineError(
            f"record: {len(indices)} indices but embeddings of shape {tuple(embeddings.shape)}; give one row per index"
        )
    if stored is not None and embeddings.shape[1] != stored.shape[1]:
        raise PipelineError(
            f"record: embeddings have {embeddings.shape[1]} columns but earlier batches had {stored.shape[1]}"
        )
