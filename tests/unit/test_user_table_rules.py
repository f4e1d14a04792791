"""The shared user-table rules (issue 15): non-finite values, id-like columns, label encodings, option lists."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from stages.core.errors import DataValidationError, ParamsError
from stages.core.validate import ensure_valid
from stages.datasets.classification import classification_schema, from_arrays
from stages.datasets.user_table import check_finite, looks_like_id, read_wide_table
from stages.methods.selection.registry import SELECTORS, make_selector


def _wide(n: int = 12, **extra) -> pl.DataFrame:
    rng = np.random.default_rng(0)
    return pl.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n), "y": np.arange(n) % 2, **extra})


@pytest.mark.parametrize(("value", "kind"), [(np.inf, "inf"), (-np.inf, "inf"), (np.nan, "NaN")])
def test_non_finite_cell_is_named_by_the_users_column(value, kind):
    frame = _wide().with_columns(pl.when(pl.int_range(pl.len()) == 3).then(value).otherwise("z").alias("z"))
    with pytest.raises(
        DataValidationError, match=rf"(?s)mine.parquet: .*column 'z': 1 {kind} value\(s\), first at row 3"
    ):
        read_wide_table(frame, "y", source="mine.parquet")


def test_inf_in_a_features_array_is_caught_and_named_as_the_column():
    table = from_arrays(np.array([[1.0, np.inf], [0.0, 1.0]]), [0, 1], ["train", "train"])
    with pytest.raises(DataValidationError) as error:
        ensure_valid(table, classification_schema(), "mine.parquet")
    assert "column 'features': every value finite" in str(error.value)
    assert "features[nulls]" not in str(error.value)


def test_check_finite_passes_integer_and_finite_columns():
    check_finite(pl.DataFrame({"a": [1, 2], "b": [0.5, -1.0]}), ["a", "b"], "t")


@pytest.mark.parametrize(
    ("name", "values", "id_like"),
    [
        ("rid", [0.5] * 12, True),
        ("patient_id", [1.0] * 12, True),
        ("Index", [3] * 12, True),
        ("visits", list(range(100, 112)), True),  # all-distinct integers on ≥ 10 rows
        ("visits", [1, 2] * 6, False),
        ("score", [float(v) for v in range(12)], False),  # floats are measurements, not ids
    ],
)
def test_id_like_columns(name, values, id_like):
    assert (looks_like_id(name, pl.Series(name, values)) is not None) is id_like


def test_a_guessed_id_column_is_an_error_that_says_how_to_resolve_it():
    frame = _wide(rid=np.arange(12))
    with pytest.raises(DataValidationError, match=r"column 'rid' looks like a row id.*--id-column rid"):
        read_wide_table(frame, "y", source="mine.parquet")
    as_id = read_wide_table(frame, "y", id_column="rid")
    assert as_id.columns.features == ("x", "z") and as_id.frame["sample_id"].to_list() == list(range(12))
    kept = read_wide_table(frame, "y", feature_columns=["x", "z", "rid"])
    assert kept.columns.describe()["n_features"] == 3 and not kept.columns.guessed_features


def test_label_encoding_is_recorded_and_noted():
    user = read_wide_table(_wide().with_columns(pl.col("y") + 1), "y")
    assert user.frame["label"].to_list() == [0, 1] * 6
    described = user.describe()["labels"]
    assert described["raw_to_internal"] == {"1": 0, "2": 1} and not described["identity"]
    assert "not 0..1" in described["notes"][0]
    strings = read_wide_table(_wide().with_columns(pl.col("y").replace_strict({0: "no", 1: "yes"})), "y")
    assert strings.labels.decode(np.array([1, 0])) == ["yes", "no"]
    assert read_wide_table(_wide(), "y").describe()["labels"]["identity"]


def test_columns_used_are_described():
    described = read_wide_table(_wide(), "y").describe()["columns"]
    assert described == {
        "label_column": "y",
        "id_column": None,
        "split_column": None,
        "feature_columns": ["x", "z"],
        "n_features": 2,
        "feature_columns_guessed": True,
    }


@pytest.mark.parametrize("method", SELECTORS.names())
def test_unknown_option_lists_every_valid_option(method):
    with pytest.raises(ParamsError) as error:
        make_selector(method, {"bogus": 1}, key="select.options")
    message = str(error.value)
    assert "select.options.bogus" in message and f"valid options of core-set selector '{method}'" in message
    for option in SELECTORS.get(method).Options.model_fields:
        assert f"    {option} (" in message


def test_the_table_source_applies_the_rules_and_records_what_it_read(tmp_path):
    from stages.datasets.sources.table import TableSourceParams, describe_user_table, load_user_table

    path = tmp_path / "mine.parquet"
    _wide(20).with_columns(pl.col("y") + 1).write_parquet(path)
    params = TableSourceParams(path=str(path), label_column="y")
    assert set(load_user_table(params)["label"]) == {0, 1}
    assert describe_user_table(params)["labels"]["raw_to_internal"] == {"1": 0, "2": 1}
    _wide(20, z=np.r_[np.inf, np.zeros(19)]).write_parquet(path)
    with pytest.raises(DataValidationError, match="column 'z': 1 inf value"):
        load_user_table(params)


def test_bandit_arms_follow_the_same_rules(tmp_path):
    from stages.methods.bandits.own_data import read_arms

    path = tmp_path / "arms.parquet"
    pl.DataFrame({"arm_id": range(12), "x0": np.eye(12)[0], "x1": np.eye(12)[1]}).write_parquet(path)
    with pytest.raises(DataValidationError, match=r"column 'arm_id' looks like a row id.*--feature-columns"):
        read_arms(path)
    assert read_arms(path, ["x0", "x1"]).shape == (12, 2)
    pl.DataFrame({"x0": [1.0, -np.inf], "x1": [0.0, 1.0]}).write_parquet(path)
    with pytest.raises(DataValidationError, match="column 'x0': 1 inf value"):
        read_arms(path)
