"""The pool and test arrays every Info-Coevolution step reads, and the test-accuracy callback."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from stages.core.evaluation import CLASSIFICATION
from stages.core.io import read_parquet
from stages.datasets.classification import ClassificationArrays, to_arrays
from stages.models.mlp import MLPClassifier
from stages.models.training import Standardizer, predict


@dataclass(frozen=True)
class PoolAndTest:
    """The annotation pool (its labels are the oracle) and the evaluation split."""

    pool: ClassificationArrays
    test: ClassificationArrays

    @property
    def n_classes(self) -> int:
        """Classes seen in the pool."""
        return int(self.pool.labels.max()) + 1

    def test_accuracy(self) -> Callable[[MLPClassifier, Standardizer], float]:
        """Accuracy on the test split (reported only; no strategy sees it)."""

        def accuracy(model: MLPClassifier, standardize: Standardizer) -> float:
            predicted = predict(model, standardize(self.test.features))
            return CLASSIFICATION.evaluate(self.test.labels, predicted=predicted)["accuracy"]

        return accuracy


def load_pool_and_test(pool_path: Path, test_path: Path) -> PoolAndTest:
    """Read both tables as arrays."""
    return PoolAndTest(to_arrays(read_parquet(pool_path)), to_arrays(read_parquet(test_path)))
