"""Temperature scaling (Guo et al., 2017): one scalar T that divides the logits, fitted by minimising the
negative log-likelihood on a labelled held-out split. It leaves every arg-max unchanged and makes confidences
match accuracy; fit it on held-out labels, never on the test split.
"""

from __future__ import annotations

import numpy as np
import torch
from torch.nn import functional as F

MIN_TEMPERATURE, MAX_TEMPERATURE = 0.05, 20.0


def negative_log_likelihood(logits: np.ndarray, labels: np.ndarray, temperature: float = 1.0) -> float:
    """Mean cross-entropy of `labels` under softmax(`logits` / `temperature`)."""
    scaled = torch.from_numpy(np.asarray(logits, dtype=np.float64)) / temperature
    return float(F.cross_entropy(scaled, torch.from_numpy(np.asarray(labels, dtype=np.int64))))


def fit_temperature(logits: np.ndarray, labels: np.ndarray, iterations: int = 50) -> float:
    """The temperature T ∈ [0.05, 20] minimising the NLL of `labels` under softmax(logits / T).

    Optimised over log T with L-BFGS in float64 (a one-dimensional convex problem in 1/T), so the result is
    deterministic; an empty split gives T = 1.
    """
    if len(labels) == 0:
        return 1.0
    scores = torch.from_numpy(np.asarray(logits, dtype=np.float64))
    targets = torch.from_numpy(np.asarray(labels, dtype=np.int64))
    log_t = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.LBFGS([log_t], lr=0.5, max_iter=iterations, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(scores / log_t.exp(), targets)
        loss.backward()
        return loss

    optimizer.step(closure)
    return float(np.clip(np.exp(log_t.item()), MIN_TEMPERATURE, MAX_TEMPERATURE))


def calibrated_probabilities(logits: np.ndarray, temperature: float) -> np.ndarray:
    """softmax(logits / T) per row, float64."""
    return torch.from_numpy(np.asarray(logits, dtype=np.float64) / temperature).softmax(dim=1).numpy()
