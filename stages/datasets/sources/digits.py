"""`digits`: scikit-learn's 8×8 digits (1,797 images, pixel values 0–16), split stratified into train/test."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.datasets.classification import classification_schema, from_arrays
from stages.datasets.source import CLASSIFICATION, Source
from stages.datasets.split_params import SplitSourceParams
from stages.datasets.splits import stratified_split


def load_digits(test_fraction: float, seed: int) -> pl.DataFrame:
    """scikit-learn's digits as a classification table."""
    from sklearn.datasets import load_digits as sklearn_digits

    bunch = sklearn_digits()
    images = bunch.data.astype(np.uint8)
    labels = bunch.target.astype(np.int64)
    return from_arrays(images, labels, stratified_split(labels, test_fraction, seed))


SOURCE = Source(
    "digits",
    CLASSIFICATION,
    SplitSourceParams,
    lambda params: load_digits(params.test_fraction, params.split_seed),
    "scikit-learn digits, 8×8, 1,797 images",
    schema=classification_schema(64, 0, 16, 10),
)
