"""The calibration, pool and test arrays every Info-Coevolution step reads, and the test-accuracy callback."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from stages.core.evaluation import CLASSIFICATION
from stages.core.io import read_parquet
from stages.datasets.classification import ClassificationArrays, to_arrays
from stages.methods.selection.online.loop import Calibration
from stages.models.training import predict

Scale = Callable[[np.ndarray], torch.Tensor]


@dataclass(frozen=True)
class PoolAndTest:
    """The annotation pool (its labels are the oracle), the evaluation split and the labelled calibration split."""

    pool: ClassificationArrays
    test: ClassificationArrays
    calibration: ClassificationArrays | None = None

    @property
    def n_classes(self) -> int:
        """Classes seen in the pool."""
        return int(self.pool.labels.max()) + 1

    def calibration_split(self) -> Calibration | None:
        """The held-out labelled split the loop fits each round's temperature on."""
        if self.calibration is None:
            return None
        return Calibration(self.calibration.features, self.calibration.labels)

    def test_accuracy(self) -> Callable[[torch.nn.Module, Scale], float]:
        """Accuracy on the test split (reported only; no strategy sees it)."""

        def accuracy(model: torch.nn.Module, scale: Scale) -> float:
            predicted = predict(model, scale(self.test.features), batch_size=1024)
            return CLASSIFICATION.evaluate(self.test.labels, predicted=predicted)["accuracy"]

        return accuracy


def load_pool_and_test(pool_path: Path, test_path: Path, calibration_path: Path | None = None) -> PoolAndTest:
    """Read the tables as arrays."""
    calibration = None if calibration_path is None else to_arrays(read_parquet(calibration_path))
    return PoolAndTest(to_arrays(read_parquet(pool_path)), to_arrays(read_parquet(test_path)), calibration)
