"""TU datasets: the name comes from the files, and the raw → internal label mapping is kept and reported."""

from __future__ import annotations

import numpy as np
import pytest

from stages.core.errors import PipelineError
from stages.datasets.graphs.table import build_tables
from stages.datasets.graphs.tu_format import load_tu_dataset, tu_dataset_name
from tests.unit.tu_fixture import NAME, write_tu_dataset


def test_tu_name_is_read_from_the_one_adjacency_file(tmp_path):
    assert tu_dataset_name(write_tu_dataset(tmp_path / "tu")) == NAME


def test_tu_name_inference_refuses_none_or_several(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(
        PipelineError, match=r"expected one TU adjacency file NAME_A\.txt to name the dataset, found none"
    ):
        tu_dataset_name(tmp_path / "empty")
    folder = write_tu_dataset(tmp_path / "two")
    (folder / "OTHER_A.txt").write_text("1, 2\n")
    with pytest.raises(PipelineError, match=rf"found several \(OTHER, {NAME}\); give the name"):
        tu_dataset_name(folder)
    with pytest.raises(PipelineError, match="not a folder"):
        tu_dataset_name(tmp_path / "absent")


def test_tu_label_mapping_is_kept_in_the_summary(tmp_path):
    tables = load_tu_dataset(write_tu_dataset(tmp_path), NAME)  # raw labels 1, -1, -1
    assert tables.label_mapping == {"-1": 0, "1": 1}
    assert tables.graphs["label"].to_list() == [1, 0, 0]
    summary = tables.summary()
    assert summary["label_mapping"] == {"-1": 0, "1": 1} and summary["label_counts"] == {0: 2, 1: 1}
    assert build_tables(np.array([0]), [np.ones((2, 1))], [np.zeros((0, 2))]).summary()["label_mapping"] == {}
