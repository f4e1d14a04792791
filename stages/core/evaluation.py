"""One evaluator per task kind (OGB style), so every paper reports the same metric computed the same way.

`CLASSIFICATION.evaluate(labels, predicted=...)` → `{"accuracy": ...}`;
`GRAPH_CLASSIFICATION.evaluate(labels, probabilities=...)` → `{"auroc": ..., "accuracy": ...}` (AUROC is
one-vs-rest macro for more than two classes, NaN when the labels hold a single class).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stages.core.errors import PipelineError
from stages.core.registry import Registry


def accuracy(labels: np.ndarray, predicted: np.ndarray) -> float:
    """Share of predicted labels equal to the true ones."""
    return float(np.mean(np.asarray(predicted) == np.asarray(labels)))


def auroc(labels: np.ndarray, probabilities: np.ndarray) -> float:
    """Area under the ROC curve of class probabilities (n × classes)."""
    from sklearn.metrics import roc_auc_score

    n_classes = probabilities.shape[1]
    if len(np.unique(labels)) < 2:
        return float("nan")
    if n_classes == 2:
        return float(roc_auc_score(labels, probabilities[:, 1]))
    return float(roc_auc_score(labels, probabilities, multi_class="ovr", labels=list(range(n_classes))))


@dataclass(frozen=True)
class Evaluator:
    """The metrics of one task kind, from predicted labels or class probabilities."""

    task: str
    metrics: tuple[str, ...]

    def evaluate(
        self, labels: np.ndarray, predicted: np.ndarray | None = None, probabilities: np.ndarray | None = None
    ) -> dict[str, float]:
        """Every metric of the task kind (predicted labels default to the argmax of the probabilities)."""
        if predicted is None and probabilities is None:
            raise PipelineError(f"{self.task} evaluator: give predicted labels or class probabilities")
        if "auroc" in self.metrics and probabilities is None:
            raise PipelineError(f"{self.task} evaluator: AUROC needs class probabilities")
        if predicted is None:
            predicted = probabilities.argmax(axis=1)
        values = {
            "auroc": lambda: auroc(labels, probabilities),
            "accuracy": lambda: accuracy(labels, predicted),
        }
        return {metric: values[metric]() for metric in self.metrics}


EVALUATORS: Registry[Evaluator] = Registry("task kind")
CLASSIFICATION = Evaluator("classification", ("accuracy",))
GRAPH_CLASSIFICATION = Evaluator("graph_classification", ("auroc", "accuracy"))
EVALUATORS.add(CLASSIFICATION.task, CLASSIFICATION)
EVALUATORS.add(GRAPH_CLASSIFICATION.task, GRAPH_CLASSIFICATION)
