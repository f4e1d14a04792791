"""`icml25 select` on a stranger's table (issue 15): bad cells, id columns, sweeps, checks and reuse."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from stages.methods.selection import table_selection
from stages.methods.selection.table_selection import coreset_checks
from stages.platform.commands import main


def ring_table(n_ring: int = 40, n_center: int = 10, seed: int = 0) -> pl.DataFrame:
    """Classes 0 and 1 on a wide ring, class 2 a tight cluster at its centre (k-center never reaches it early)."""
    rng = np.random.default_rng(seed)
    angles = rng.uniform(0, 2 * np.pi, 2 * n_ring)
    ring = 10 * np.c_[np.cos(angles), np.sin(angles)] + rng.normal(0, 0.3, (2 * n_ring, 2))
    centre = rng.normal(0, 0.05, (n_center, 2))
    features = np.r_[ring, centre]
    labels = np.r_[np.zeros(n_ring), np.ones(n_ring), np.full(n_center, 2)].astype(np.int64)
    labels[: 2 * n_ring] = (ring[:, 0] > 0).astype(np.int64)  # the ring's halves are the two big classes
    return pl.DataFrame({"f0": features[:, 0], "f1": features[:, 1], "y": labels})


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "mine.parquet"
    ring_table().write_parquet(path)
    return path


@pytest.fixture
def trainings(monkeypatch):
    """Counts the models `icml25 select` trains."""
    calls = []
    real = table_selection.compute_trace

    def counted(*args, **kwargs):
        calls.append(kwargs.get("seed", args[4] if len(args) > 4 else None))
        return real(*args, **kwargs)

    monkeypatch.setattr(table_selection, "compute_trace", counted)
    return calls


def select(table, *extra: str) -> int:
    return main(["select", "--input", str(table), "--label-column", "y", "--trace-epochs", "2", *extra])


def test_an_inf_cell_fails_naming_the_column_and_writes_nothing(tmp_path, table, capsys):
    frame = pl.read_parquet(table)
    frame.with_columns(
        pl.when(pl.int_range(pl.len()) == 7).then(np.inf).otherwise("f1").alias("f1")
    ).write_parquet(table)
    out = tmp_path / "out.parquet"
    assert select(table, "--method", "random", "--output", str(out)) == 2
    error = capsys.readouterr().err
    assert "column 'f1': 1 inf value(s), first at row 7" in error and str(table) in error
    assert not out.exists()
    assert main(["validate", "--input", str(table), "--label-column", "y"]) == 2


def test_an_id_column_never_becomes_a_feature(tmp_path, table, capsys):
    pl.read_parquet(table).with_columns(pl.int_range(1000, 1090, dtype=pl.Int64).alias("rid")).write_parquet(
        table
    )
    out = tmp_path / "out.parquet"
    assert select(table, "--method", "random", "--budget", "0.5", "--output", str(out)) == 2
    assert "column 'rid' looks like a row id" in capsys.readouterr().err and not out.exists()
    report = tmp_path / "report.json"
    args = (
        "--method",
        "random",
        "--budget",
        "0.5",
        "--id-column",
        "rid",
        "--output",
        str(out),
        "--report",
        str(report),
    )
    assert select(table, *args) == 0
    columns = json.loads(report.read_text())["columns"]
    assert columns["feature_columns"] == ["f0", "f1"] and columns["id_column"] == "rid"
    assert set(pl.read_parquet(out)["sample_id"]) <= set(range(1000, 1090))
    assert '"feature_columns": [' in capsys.readouterr().out  # printed too


def test_labels_keep_the_users_values_and_the_mapping_is_recorded(tmp_path, table, capsys):
    pl.read_parquet(table).with_columns(pl.col("y") + 1).write_parquet(table)
    out, report = tmp_path / "out.parquet", tmp_path / "report.json"
    assert (
        select(table, "--method", "random", "--budget", "0.5", "--output", str(out), "--report", str(report))
        == 0
    )
    labels = json.loads(report.read_text())["labels"]
    assert labels["raw_to_internal"] == {"1": 0, "2": 1, "3": 2} and labels["notes"]
    assert set(pl.read_parquet(out)["label"]) == {1, 2, 3}


def test_random_trains_no_model(tmp_path, table, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("random must not train")

    monkeypatch.setattr(table_selection, "compute_trace", refuse)
    out = tmp_path / "sweep"
    assert (
        select(table, "--method", "random", "--budget", "0.1,0.2", "--seed", "0,1", "--output", str(out)) == 0
    )
    report = json.loads((out / "report.json").read_text())
    assert report["trainings"] == 0 and len(report["runs"]) == 4
    assert all(run["checks"]["full_model_accuracy"] is None for run in report["runs"])


def test_a_dropped_class_is_a_warning_and_a_report_field(tmp_path, table, capsys):
    out, report = tmp_path / "out.parquet", tmp_path / "report.json"
    args = ("--method", "kcenter", "--option", "balance=false", "--feature-space", "raw", "--budget", "0.034")
    assert select(table, *args, "--output", str(out), "--report", str(report)) == 0
    assert 2 not in set(pl.read_parquet(out)["label"])
    run = json.loads(report.read_text())["runs"][0]
    assert run["checks"]["missing_classes"] == [2] and any(
        "no sample of class(es) 2" in w for w in run["warnings"]
    )
    assert (
        "warning: kcenter budget 0.034 seed 0: the core-set has no sample of class(es) 2"
        in capsys.readouterr().err
    )


def test_a_sweep_writes_every_run_and_trains_once(tmp_path, table, trainings):
    out, scores, embedding = tmp_path / "sweep", tmp_path / "scores.parquet", tmp_path / "embedding.parquet"
    args = ["--method", "el2n,mrmc", "--method", "herding", "--budget", "0.1,0.2", "--seed", "0,1"]
    args += [
        "--trace-seed",
        "0",
        "--output",
        str(out),
        "--scores-out",
        str(scores),
        "--embedding-out",
        str(embedding),
    ]
    assert select(table, *args) == 0
    assert trainings == [0]
    files = sorted(path.name for path in out.glob("*.parquet"))
    expected = [
        f"{m}-b{b}-s{s}.parquet" for m in ("el2n", "herding", "mrmc") for b in ("0.1", "0.2") for s in (0, 1)
    ]
    assert files == sorted(expected)
    report = json.loads((out / "report.json").read_text())
    assert report["trainings"] == 1 and len(report["runs"]) == 12
    assert all(run["checks"]["full_model_accuracy"] is not None for run in report["runs"])
    scored = pl.read_parquet(scores)
    assert scored.height == 90 and {"score_el2n", "score_mrmc", "full_model_correct"} <= set(scored.columns)
    # the saved embedding serves a later call without training, and gives the same herding core-set
    again = tmp_path / "again.parquet"
    args = ["--method", "herding", "--budget", "0.1", "--embedding", str(embedding), "--output", str(again)]
    assert select(table, *args) == 0
    assert trainings == [0]
    assert pl.read_parquet(again).equals(pl.read_parquet(out / "herding-b0.1-s0.parquet"))


def test_sweep_and_embedding_misuse_are_named(tmp_path, table, capsys):
    assert select(table, "--method", "random,herding", "--output", str(tmp_path / "x.parquet")) == 2
    assert "a sweep writes one file per run" in capsys.readouterr().err
    bad = tmp_path / "embedding.parquet"
    pl.DataFrame({"sample_id": [0, 1]}).with_columns(pl.Series("embedding", [[0.0], [1.0]])).write_parquet(
        bad
    )
    assert (
        select(table, "--method", "herding", "--embedding", str(bad), "--output", str(tmp_path / "y.parquet"))
        == 2
    )
    assert f"{bad}: 88 pool sample_id(s) have no embedding" in capsys.readouterr().err
    assert (
        select(
            table,
            "--method",
            "random",
            "--scores-out",
            str(tmp_path / "s.parquet"),
            "--output",
            str(tmp_path / "z.parquet"),
        )
        == 2
    )
    assert "per-sample scores need a trained model" in capsys.readouterr().err
    assert {path.name for path in tmp_path.iterdir()} == {"mine.parquet", "embedding.parquet"}  # the inputs


def test_an_unknown_option_lists_the_valid_ones(tmp_path, table, capsys):
    assert (
        select(
            table, "--method", "herding", "--option", "balanse=true", "--output", str(tmp_path / "o.parquet")
        )
        == 2
    )
    error = capsys.readouterr().err
    assert "select.options.herding.balanse" in error and "balance (bool, default True)" in error


def test_checks_flag_a_core_set_of_the_full_models_mistakes():
    labels = np.array([0] * 60 + [1] * 40)
    correct = np.ones(100, dtype=bool)
    correct[[0, 1, 2, 60, 61]] = False  # 95 % accuracy, majority share 60 %
    checks = coreset_checks(labels, np.array([0, 1, 2, 60, 70]), 2, correct)
    assert checks["misclassified_share"] == 0.8 and checks["dominated_by_misclassified"]
    assert not coreset_checks(labels, np.array([0, 3, 4, 60, 70]), 2, correct)["dominated_by_misclassified"]
    weak = np.zeros(100, dtype=bool)
    weak[:50] = True  # 50 % accuracy, below the majority share: picks of its mistakes are no signal
    assert not coreset_checks(labels, np.array([60, 61, 62, 63, 64]), 2, weak)["dominated_by_misclassified"]
    shifted = coreset_checks(labels, np.array([60, 61, 62, 63, 64]), 2, None)
    assert shifted["missing_classes"] == [0] and shifted["class_share_shift"] == 0.6
    assert shifted["share_shift_exceeds_bound"] and shifted["misclassified_share"] is None
