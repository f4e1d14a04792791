"""Great Expectations validation: failures name the dataset, column and expectation."""

from __future__ import annotations

import json

import polars as pl
import pytest

from stages.core.errors import DataValidationError
from stages.core.validate import ensure_valid, validate_table
from stages.datasets.classification import classification_schema

SCHEMA = classification_schema(n_features=5, n_classes=3)


def test_valid_table_passes_and_report_is_saved(tmp_path, tiny_table):
    report = ensure_valid(tiny_table, SCHEMA, "tiny", tmp_path / "report.json")
    saved = json.loads((tmp_path / "report.json").read_text())
    assert report.success and saved["success"] and saved["rows"] == tiny_table.height
    assert {r["expectation"] for r in saved["results"]} >= {
        "expect_column_values_to_be_unique",
        "expect_column_values_to_not_be_null",
        "expect_column_values_to_be_in_set",
    }


def test_missing_column_is_named(tiny_table):
    with pytest.raises(
        DataValidationError, match=r"dataset 'tiny'.*\n.*column 'label': expect_column_to_exist"
    ):
        ensure_valid(tiny_table.drop("label"), SCHEMA, "tiny")


def test_null_label_is_reported(tiny_table):
    broken = tiny_table.with_columns(
        pl.when(pl.col("sample_id") == 3).then(None).otherwise(pl.col("label")).alias("label")
    )
    with pytest.raises(
        DataValidationError, match="column 'label': expect_column_values_to_not_be_null failed, 1 bad"
    ):
        ensure_valid(broken, SCHEMA, "tiny")


def test_string_labels_are_a_type_error(tiny_table):
    broken = tiny_table.with_columns(pl.col("label").cast(pl.Utf8))
    with pytest.raises(DataValidationError, match="column 'label': expect_column_values_to_be_of_kind_int"):
        ensure_valid(broken, SCHEMA, "tiny")


def test_duplicate_ids_are_reported(tiny_table):
    broken = tiny_table.with_columns(pl.lit(7, dtype=pl.Int64).alias("sample_id"))
    with pytest.raises(DataValidationError, match="sample_id': expect_column_values_to_be_unique"):
        ensure_valid(broken, SCHEMA, "tiny")


def test_out_of_range_features_and_nan_are_reported():
    schema = classification_schema(n_features=2, feature_min=0, feature_max=1)
    frame = pl.DataFrame({"sample_id": [0, 1], "split": ["train", "test"], "label": [0, 1]}).with_columns(
        pl.Series("features", [[0.5, 3.0], [float("nan"), 0.1]], dtype=pl.Array(pl.Float64, 2))
    )
    report = validate_table(frame, schema, "f")
    failed = {(f["column"], f["expectation"]) for f in report.failures}
    assert ("features[max]", "expect_column_values_to_be_between") in failed
    assert ("features[nulls]", "expect_column_values_to_be_between") in failed


def test_unknown_split_is_reported(tiny_table):
    broken = tiny_table.with_columns(pl.lit("valid").alias("split"))
    with pytest.raises(DataValidationError, match="column 'split': expect_column_values_to_be_in_set"):
        ensure_valid(broken, SCHEMA, "tiny")


def test_failure_writes_no_report(tmp_path, tiny_table):
    with pytest.raises(DataValidationError):
        ensure_valid(tiny_table.drop("split"), SCHEMA, "tiny", tmp_path / "report.json")
    assert not (tmp_path / "report.json").exists()
