"""Runs with overrides as DVC experiments, audits of them, and the DVC remote round trip."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from stages.core.dvc_cli import run_dvc
from stages.core.errors import ParamsError
from stages.core.io import file_md5
from stages.platform.audit import audit_markdown, audit_record, diff_markdown
from stages.platform.experiments import experiment_revs, run_experiment
from tests.conftest import free_port

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def baseline(mrmc_baseline, tmp_path_factory) -> Path:
    """This module's copy of the committed MRMC smoke baseline (its tests add experiments and remotes)."""
    return Path(shutil.copytree(mrmc_baseline, tmp_path_factory.mktemp("experiments") / "ws", symlinks=True))


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("mrmc.train.epoks=3", r"mrmc\.train\.epoks"),
        ("mrmc.budgets=[0.1, 2]", r"mrmc\.budgets"),
        ("coreset.budget=0.1", "may only change 'mrmc.*'"),
    ],
)
def test_bad_override_fails_before_any_work(baseline, override, message):
    before = set(experiment_revs(baseline))
    with pytest.raises(ParamsError, match=message):
        run_experiment("mrmc", [override], workspace=baseline)
    assert set(experiment_revs(baseline)) == before


def test_concurrent_experiments_finish_and_leave_the_workspace_alone(baseline):
    workspace = baseline
    lock_before = file_md5(workspace / "dvc.lock")
    runs = {"ep3": ["mrmc.train.epochs=3"], "ratio2": ["mrmc.claims.uneven_ratio=2.0"]}
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {
            name: pool.submit(run_experiment, "mrmc", overrides, name, workspace)
            for name, overrides in runs.items()
        }
        results = {name: future.result() for name, future in futures.items()}
    assert {result.name for result in results.values()} == set(runs)
    assert file_md5(workspace / "dvc.lock") == lock_before
    assert set(runs) <= set(experiment_revs(workspace))

    epochs = audit_record("mrmc", "ep3", workspace)
    assert epochs.params["train"]["epochs"] == 3
    assert epochs.metrics["data/mrmc/metrics.json"]["full"]["all"]["mean_accuracy"] > 0
    assert {claim["id"] for claim in epochs.claims} == {
        "accuracy_vs_random",
        "accuracy_vs_baselines",
        "regulariser_vs_pure_mrmc",
        "accuracy_vs_random_small_budgets",
        "class_quotas_lift_pure_mrmc",
    }
    assert all(len(md5) >= 32 for md5 in epochs.hashes.values())
    text = audit_markdown(epochs)
    assert "`mrmc.train.epochs` = `3`" in text and "data/mrmc/pool.parquet" in text
    assert '"success": true' in text

    baseline = audit_record("mrmc", "workspace", workspace)
    diff = diff_markdown(baseline, epochs)
    assert "| `train.epochs` | `2` | `3` |" in diff
    assert "`data/mrmc/models`" in diff  # retrained models
    pool_line = f"`data/mrmc/pool.parquet` | `{baseline.hashes['data/mrmc/pool.parquet']}`"
    assert pool_line not in diff  # the pool did not change
    ratio_diff = diff_markdown(baseline, audit_record("mrmc", "ratio2", workspace))
    assert "claims.uneven_ratio" in ratio_diff and "## Metrics (0 changed)" in ratio_diff
    between = diff_markdown(epochs, audit_record("mrmc", "ratio2", workspace))  # two experiments
    assert (
        "| `train.epochs` | `3` | `2` |" in between and "| `claims.uneven_ratio` | `1.5` | `2.0` |" in between
    )


@pytest.fixture
def s3_endpoint(monkeypatch) -> Iterator[str]:
    """An S3-compatible server (moto's server mode) on 127.0.0.1 with an empty bucket `icml25-dvc`."""
    import boto3
    from moto.server import ThreadedMotoServer

    for key, value in {
        "AWS_ACCESS_KEY_ID": "icml25-test",
        "AWS_SECRET_ACCESS_KEY": "icml25-test",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(key, value)  # what `dvc push` in a subprocess reads, as it would for real S3
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket="icml25-dvc")
    yield endpoint
    server.stop()


def _add_remote(workspace, url: str, settings: dict[str, str]) -> None:
    run_dvc(["remote", "add", "--local", "-f", "-d", "shared", url], workspace, capture=True)
    for key, value in settings.items():
        run_dvc(["remote", "modify", "--local", "shared", key, value], workspace, capture=True)


@pytest.mark.parametrize("remote", ["folder", "s3"])
def test_push_pull_restores_identical_data_into_a_fresh_clone(baseline, tmp_path, remote, request):
    source = baseline
    if remote == "s3":
        endpoint = request.getfixturevalue("s3_endpoint")
        url, settings = "s3://icml25-dvc/cache", {"endpointurl": endpoint}
    else:
        url, settings = str(tmp_path / "remote"), {}
    _add_remote(source, url, settings)
    request.addfinalizer(lambda: run_dvc(["remote", "remove", "--local", "shared"], source, capture=True))
    run_dvc(["push"], source, capture=True)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(source), str(clone)], check=True)
    _add_remote(clone, url, settings)
    run_dvc(["pull", "mrmc-claims", "--with-deps"], clone, capture=True)  # what this workspace holds
    for path in (
        "data/mrmc/pool.parquet",
        "data/mrmc/results.parquet",
        "data/mrmc/claims.json",
        "data/mrmc/headline.json",
    ):
        assert file_md5(clone / path) == file_md5(source / path), path
    status = run_dvc(["status", "mrmc-claims", "--with-deps", "--json"], clone, capture=True)
    assert status.stdout.strip() == "{}"
    if remote == "s3":  # the clone had no cache: every object came through the S3 API
        import boto3

        listed = boto3.client("s3", endpoint_url=endpoint).list_objects_v2(
            Bucket="icml25-dvc", Prefix="cache/"
        )
        assert listed["KeyCount"] > 0


def test_sweep_fans_out_on_dask_as_experiments(baseline, tmp_path, monkeypatch):
    from prefect.testing.utilities import prefect_test_harness

    from flows.experiment_flow import run_all_papers

    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect-home"))
    before = set(experiment_revs(baseline))
    sweep = [["mrmc.claims.uneven_ratio=2.5"], ["mrmc.claims.uneven_ratio=3.5"]]
    with prefect_test_harness(server_startup_timeout=120):
        names = run_all_papers(["mrmc"], sweep, str(baseline))
    assert len(set(names)) == 2 and set(names) <= set(experiment_revs(baseline)) - before
    ratios = sorted(audit_record("mrmc", name, baseline).params["claims"]["uneven_ratio"] for name in names)
    assert ratios == [2.5, 3.5]
