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
        """Store the per-sample losses (and embeddings) of one training batch."""
        indices = np.asarray(indices, dtype=np.int64)
        self.loss[indices] = losses
        if embeddings is not None:
            if self.embeddings is None:
                self.embeddings = np.zeros((len(self), embeddings.shape[1]), dtype=np.float32)
            self.embeddings[indices] = embeddings
        self.seen[indices] = True
