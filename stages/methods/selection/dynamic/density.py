"""Local density in the model's current feature space: a kernel density estimate on the unit sphere (von
Mises–Fisher kernel, `bandwidth` in cosine units) against a random set of reference samples, so it costs
n × anchors, not n², and needs no top-k."""

from __future__ import annotations

import numpy as np
import torch
from torch.nn import functional as F


def local_density(
    embeddings: np.ndarray, seen: np.ndarray, anchors: int, bandwidth: float, rng: np.random.Generator
) -> np.ndarray:
    """Log-density per sample (up to a constant); samples never embedded get the median of the seen ones."""
    n_samples = len(seen)
    density = np.zeros(n_samples, dtype=np.float32)
    seen_rows = np.flatnonzero(seen)
    if len(seen_rows) <= 1:
        return density
    points = F.normalize(torch.from_numpy(embeddings[seen_rows]), dim=1)
    reference = torch.from_numpy(rng.choice(len(seen_rows), size=min(anchors, len(seen_rows)), replace=False))
    similarity = points @ points[reference].T
    similarity[reference, torch.arange(len(reference))] = -torch.inf  # a sample is not its own neighbour
    density[seen_rows] = torch.logsumexp((similarity - 1.0) / bandwidth, dim=1).numpy()
    density[~seen] = np.median(density[seen_rows])
    return density
