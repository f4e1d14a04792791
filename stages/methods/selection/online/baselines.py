"""Baseline annotation strategies: uniform random and least-confidence (uncertainty) sampling."""

from __future__ import annotations

import numpy as np

from stages.methods.selection.coreset import top_by_score
from stages.methods.selection.online.strategy import STRATEGIES, AnnotationStrategy


@STRATEGIES.register("random")
class RandomAnnotation(AnnotationStrategy):
    """Label unlabelled rows drawn uniformly at random."""

    name = "random"

    def pick(self, size: int) -> np.ndarray:
        """`size` unlabelled rows, uniformly without replacement."""
        return self.rng.choice(self._current_view().unlabelled_rows(), size, replace=False)


@STRATEGIES.register("least_confidence")
class LeastConfidence(AnnotationStrategy):
    """Label the rows whose top predicted probability is lowest (ties → lower row first)."""

    name = "least_confidence"

    def pick(self, size: int) -> np.ndarray:
        """The `size` unlabelled rows with the smallest max-probability."""
        view = self._current_view()
        candidates = view.unlabelled_rows()
        uncertainty = 1.0 - view.probabilities[candidates].max(axis=1)
        return candidates[top_by_score(uncertainty, size)]
