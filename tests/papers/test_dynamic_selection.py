"""Dynamic-selection pipeline: a user's wide Parquet table end to end, determinism, and bad params."""

from __future__ import annotations

import shutil

import polars as pl
import pytest

from stages.core.claims import read_claims
from stages.core.io import file_md5
from stages.core.params import apply_overrides, read_params_file, write_params_file
from stages.platform.pipelines import run_stage
from tests.conftest import run_cli
from tests.papers.test_info_coevolution import wide_table

STEPS = ("prepare", "consistency", "train", "evaluate", "timing", "claims")
TINY = (
    "dynamic_selection.dataset=table",
    "dynamic_selection.pool_size=null",
    "dynamic_selection.test_size=null",
    "dynamic_selection.seeds=[0, 1, 2]",
    "dynamic_selection.ratios=[0.5]",
    "dynamic_selection.augmentation.kind=feature_noise",
    "dynamic_selection.class_descriptions=['a photo of a cat', 'a chart of stock prices', 'a recipe for soup']",
    "dynamic_selection.projection.epochs=30",
    "dynamic_selection.projection.batch_size=16",
    "dynamic_selection.train.epochs=6",
    "dynamic_selection.train.learning_rate=0.01",
    "dynamic_selection.train.batch_size=16",
    "dynamic_selection.train.hidden=[16]",
    "dynamic_selection.train.architecture=mlp",
    "common.datasets.table.path=mine.parquet",
    "common.datasets.table.label_column=y",
)
DATA_OUTPUTS = (
    "labels.parquet",
    "consistency.parquet",
    "runs.parquet",
    "epochs.parquet",
    "summary.parquet",
    "metrics.json",
    "plots/accuracy_vs_ratio.csv",
    "figures/accuracy_vs_ratio.png",
    "figures/selection.png",
    "claims.json",
)  # everything outside timings/


@pytest.fixture
def workspace(tmp_path, repo_root, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(repo_root / "params.yaml", tmp_path / "params.yaml")
    wide_table().write_parquet(tmp_path / "mine.parquet")
    set_params(tmp_path, *TINY)
    return tmp_path


def set_params(workspace, *overrides):
    path = workspace / "params.yaml"
    write_params_file(apply_overrides(read_params_file(path), list(overrides)), path)


def run_pipeline(workspace, stages=("data-table", *(f"dynamic_selection-{step}" for step in STEPS))) -> None:
    for stage in stages:
        run_stage(stage, workspace / "params.yaml", workspace)


def test_users_wide_table_runs_end_to_end_and_deterministically(workspace):
    run_pipeline(workspace)
    root = workspace / "data" / "dynamic_selection"
    claims = read_claims(root / "claims.json")
    assert [claim.id for claim in claims] == [
        "lossless_at_half",
        "beats_dynamic_baselines",
        "augmentation_synergy",
        "noise_robust",
    ]
    runs = pl.read_parquet(root / "runs.parquet")
    # seeds × (noise 0: full + six methods at one ratio; noise 0.2: full + the three the noise claim reads)
    assert runs.height == 3 * ((1 + 6) + (1 + 3))
    noisy_methods = set(runs.filter(pl.col("noise_rate") == 0.2)["method"])
    assert noisy_methods == {"full", "random", "random_aug", "density_consistency"}
    assert set(runs.filter(pl.col("method") == "full")["ratio"]) == {1.0}
    n_train = pl.read_parquet(root / "labels.parquet").filter(pl.col("noise_rate") == 0.0).height
    epochs = pl.read_parquet(root / "epochs.parquet")
    half = epochs.filter((pl.col("method") == "random") & (pl.col("ratio") == 0.5))
    assert set(half["n_kept"]) == {round(0.5 * n_train)}
    noisy = runs.filter((pl.col("noise_rate") == 0.2) & (pl.col("method") == "density_consistency"))
    assert noisy["suppression_precision"].is_not_null().all()
    assert (root / "figures" / "accuracy_vs_ratio.png").stat().st_size > 0
    assert [claim.id for claim in read_claims(root / "timings" / "claims.json")] == ["time_saving_at_half"]
    assert (root / "timings" / "figures" / "accuracy_vs_time.png").stat().st_size > 0
    first = {name: file_md5(root / name) for name in DATA_OUTPUTS}
    shutil.rmtree(root)
    run_pipeline(workspace)
    assert first == {name: file_md5(root / name) for name in first}


@pytest.mark.parametrize(
    ("overrides", "stage", "message"),
    [
        (("dynamic_selection.ratios=[1.5]",), "dynamic_selection-prepare",
         "dynamic_selection.ratios: Value error, ratio 1.5: the share of samples kept per epoch must be in (0, 1]"),
        (("dynamic_selection.ratios=[0.0]",), "dynamic_selection-prepare", "must be in (0, 1]"),
        (("dynamic_selection.methods.random.method=infobatch",), "dynamic_selection-prepare",
         "methods.random: unknown dynamic selection method 'infobatch'"),
        (("dynamic_selection.noise_rates=[0.2]",), "dynamic_selection-prepare", "must hold 0.0 and claims.noise_rate"),
        (("dynamic_selection.methods.random_aug.noise_rates=[0.0]",), "dynamic_selection-prepare",
         "claims read ['random_aug'] at noise rate 0.2; add it to their noise_rates"),
        (("dynamic_selection.class_descriptions=null",), "dynamic_selection-consistency",
         "dynamic_selection.class_descriptions: no built-in class descriptions for dataset 'table'"),
    ],
    ids=["ratio-above-one", "ratio-zero", "unknown-method", "no-clean-run", "noisy-peer-not-run", "no-class-texts"],
)  # fmt: skip
def test_bad_params_fail_clearly_without_outputs(workspace, overrides, stage, message):
    run_pipeline(workspace, ["data-table"])
    if stage != "dynamic_selection-prepare":
        run_pipeline(workspace, ["dynamic_selection-prepare"])
    prepared = sorted(path.name for path in (workspace / "data" / "dynamic_selection").glob("*"))
    set_params(workspace, *overrides)
    result = run_cli(["stage", stage], workspace)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    left = sorted(path.name for path in (workspace / "data" / "dynamic_selection").glob("*"))
    assert left == prepared  # nothing new written, nothing already produced lost
    assert not list(workspace.glob(".icml25-staging-*"))
