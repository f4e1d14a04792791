"""The arrays every dynamic-selection step reads: pool features, test split, labels per noise rate."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import torch

from stages.core.errors import PipelineError
from stages.core.io import read_parquet
from stages.datasets.classification import ClassificationArrays, to_arrays
from stages.methods.selection.dynamic.training import Standardize
from stages.models.training import Standardizer


@dataclass(frozen=True)
class NoisyLabels:
    """The observed labels of one noise rate, with the clean labels and flip flags kept for evaluation."""

    observed: np.ndarray
    clean: np.ndarray
    flipped: np.ndarray


@dataclass(frozen=True)
class SelectionData:
    """Pool features (raw units, float32), the test split, and the standardisation fitted on the pool."""

    pool: ClassificationArrays
    test: ClassificationArrays
    labels: pl.DataFrame

    @property
    def n_classes(self) -> int:
        """Classes in the clean pool labels."""
        return int(self.pool.labels.max()) + 1

    def features(self) -> torch.Tensor:
        """Pool features as a tensor in raw units (augmentation works there)."""
        return torch.from_numpy(self.pool.features)

    def standardize(self, architecture: str = "mlp") -> Standardize:
        """The input scaling fitted on the pool: per feature for the MLP (and the consistency projection); one
        mean and std over all pixels for the CNN, so images keep their spatial contrast."""
        if architecture == "cnn":
            features = torch.from_numpy(self.pool.features)
            return Standardize(features.mean(), features.std().clamp(min=1e-6))
        fitted = Standardizer.fit(self.pool.features)
        return Standardize(torch.from_numpy(fitted.mean), torch.from_numpy(fitted.std))

    def noisy(self, rate: float) -> NoisyLabels:
        """The labels of noise rate `rate`, in pool row order."""
        block = self.labels.filter(pl.col("noise_rate") == rate).sort("row")
        if block.height != len(self.pool):
            raise PipelineError(
                f"labels.parquet has {block.height} rows for noise rate {rate}, pool has {len(self.pool)}"
            )
        return NoisyLabels(
            np.array(block["label"].to_numpy(), dtype=np.int64),
            np.array(block["clean_label"].to_numpy(), dtype=np.int64),
            np.array(block["flipped"].to_numpy(), dtype=bool),
        )


def load_selection_data(pool_path: Path, test_path: Path, labels_path: Path) -> SelectionData:
    """Read the pool, the test split and the noisy labels."""
    return SelectionData(
        to_arrays(read_parquet(pool_path)), to_arrays(read_parquet(test_path)), read_parquet(labels_path)
    )
