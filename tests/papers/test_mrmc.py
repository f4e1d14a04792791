"""MRMC steps: pure functions, claims logic, and determinism of the data outputs."""

from __future__ import annotations

import shutil

import numpy as np
import polars as pl
import pytest

from stages.core.io import file_md5
from stages.core.params import apply_overrides, read_params_file, validate_section, write_params_file
from stages.datasets.splits import proportional_counts, split_pool_and_test
from stages.papers.mrmc.claims import accuracy_claim, class_count_ratio
from stages.papers.mrmc.params import MRMCParams
from stages.papers.mrmc.pipeline import PIPELINE
from stages.pipelines import run_stage

TINY = [
    "mrmc.dataset=digits",
    "mrmc.pool_size=300",
    "mrmc.test_size=200",
    "mrmc.seeds=[0, 1]",
    "mrmc.trace={epochs: 3, hidden: [16]}",
    "mrmc.train={epochs: 2, hidden: [16]}",
]
DATA_OUTPUTS = [
    "data/mrmc/pool.parquet",
    "data/mrmc/test.parquet",
    "data/mrmc/validation.json",
    "data/mrmc/trace.parquet",
    "data/mrmc/selections.parquet",
    "data/mrmc/results.parquet",
    "data/mrmc/metrics.json",
    "data/mrmc/plots/accuracy_vs_budget.csv",
    "data/mrmc/figures/accuracy_vs_budget.png",
]


def test_proportional_counts_sum_and_follow_frequency():
    labels = np.array([0] * 50 + [1] * 30 + [2] * 20)
    assert proportional_counts(labels, 10) == {0: 5, 1: 3, 2: 2}
    assert sum(proportional_counts(labels, 7).values()) == 7


def test_pool_comes_only_from_train_rows(tiny_table):
    pool, test = split_pool_and_test(tiny_table, pool_size=30, test_size=None, seed=0, namespace="mrmc")
    assert set(pool["split"]) == {"train"} and set(test["split"]) == {"test"}
    assert pool.height == 30 and test.height == tiny_table.filter(pl.col("split") == "test").height
    assert pool["label"].value_counts()["count"].to_list() == [10, 10, 10]


def _params(repo_root) -> MRMCParams:
    return validate_section(MRMCParams, read_params_file(repo_root / "params.yaml")["mrmc"], "mrmc")


def _summary(rows):
    return pl.DataFrame(rows, schema=["method", "budget", "mean_accuracy"], orient="row")


def test_accuracy_claim_needs_largest_gap_at_smallest_budget(repo_root):
    params = _params(repo_root)
    holds = _summary(
        [
            ("mrmc", 0.1, 0.8),
            ("random", 0.1, 0.7),
            ("mrmc", 0.3, 0.85),
            ("random", 0.3, 0.82),
            ("mrmc", 0.5, 0.86),
            ("random", 0.5, 0.86),
        ]
    )
    assert accuracy_claim(holds, params).holds
    wrong_place = _summary(
        [
            ("mrmc", 0.1, 0.71),
            ("random", 0.1, 0.7),
            ("mrmc", 0.3, 0.9),
            ("random", 0.3, 0.8),
            ("mrmc", 0.5, 0.86),
            ("random", 0.5, 0.86),
        ]
    )
    assert not accuracy_claim(wrong_place, params).holds
    worse = _summary(
        [
            ("mrmc", 0.1, 0.5),
            ("random", 0.1, 0.8),
            ("mrmc", 0.3, 0.8),
            ("random", 0.3, 0.8),
            ("mrmc", 0.5, 0.8),
            ("random", 0.5, 0.8),
        ]
    )
    claim = accuracy_claim(worse, params)
    assert not claim.holds and claim.measured["gap"]["0.10"] == pytest.approx(-0.3)


def test_class_count_ratio():
    pool = pl.DataFrame({"sample_id": range(6), "label": [0, 0, 0, 1, 1, 1]})
    selections = pl.DataFrame(
        {"method": ["m"] * 4, "budget": [0.5] * 4, "seed": [0, 0, 0, 1], "sample_id": [0, 1, 3, 4]}
    )
    # seed 0: counts 2 and 1 → 2.0; seed 1: one class missing → max/1 = 1.0
    assert class_count_ratio(selections, pool, "m", 0.5) == pytest.approx(1.5)


def _run_tiny_pipeline(workspace, repo_root):
    shutil.copy(repo_root / "params.yaml", workspace / "params.yaml")
    params_path = workspace / "params.yaml"
    write_params_file(apply_overrides(read_params_file(params_path), TINY), params_path)
    for stage in ["data-digits", *(PIPELINE.stage_name(step) for step in PIPELINE.steps)]:
        run_stage(stage, params_path, root=workspace)
    return {path: file_md5(workspace / path) for path in DATA_OUTPUTS}


def test_same_params_and_seed_give_identical_data_outputs(tmp_path, repo_root):
    first = _run_tiny_pipeline(tmp_path / "a", repo_root) if (tmp_path / "a").mkdir() is None else None
    second = _run_tiny_pipeline(tmp_path / "b", repo_root) if (tmp_path / "b").mkdir() is None else None
    assert first == second
    models_a = sorted((tmp_path / "a/data/mrmc/models").iterdir())
    models_b = sorted((tmp_path / "b/data/mrmc/models").iterdir())
    assert [file_md5(p) for p in models_a] == [file_md5(p) for p in models_b]
    assert (tmp_path / "a/data/mrmc/claims.json").is_file()
