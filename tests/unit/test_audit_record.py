"""`icml25 audit` shows the params `dvc.lock` recorded for the run it audits, flags the keys edited since, and
refuses to audit what was never run."""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from stages.core.errors import PipelineError
from stages.platform.audit import audit_markdown, audit_record, recorded_params, unflatten


def _workspace(tmp_path, pool_size_now: int, with_claims: bool = True):
    """A git workspace whose dvc.lock records one `mrmc-claims` run at pool_size 1500."""
    lock = {
        "schema": "2.0",
        "stages": {
            "mrmc-claims": {
                "cmd": "python -m stages stage mrmc-claims",
                "params": {
                    "params.yaml": {"common.seed": 0, "mrmc.pool_size": 1500, "mrmc.train": {"epochs": 10}}
                },
                "outs": [{"path": "data/mrmc/claims.json", "md5": "a" * 32}],
            }
        },
    }
    (tmp_path / "dvc.lock").write_text(yaml.safe_dump(lock))
    params = {"common": {"seed": 0}, "mrmc": {"pool_size": pool_size_now, "train": {"epochs": 10}}}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    if with_claims:
        (tmp_path / "data/mrmc").mkdir(parents=True)
        (tmp_path / "data/mrmc/claims.json").write_text(
            json.dumps([{"id": "c", "verdict": "holds", "reason": "r"}])
        )
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "run"], cwd=tmp_path, check=True)
    return tmp_path


def test_the_audit_shows_the_recorded_params_and_flags_an_edit_not_rerun(tmp_path):
    record = audit_record("mrmc", workspace=_workspace(tmp_path, pool_size_now=777))
    assert record.params == {"pool_size": 1500, "train": {"epochs": 10}}  # what the hashes were made with
    assert record.shared_params == {"common.seed": 0}
    assert record.params_not_rerun == {"mrmc.pool_size": (1500, 777)}
    text = audit_markdown(record)
    assert "`mrmc.pool_size` = `1500`" in text and "| `mrmc.pool_size` | `1500` | `777` |" in text


def test_an_up_to_date_workspace_flags_nothing(tmp_path):
    record = audit_record("mrmc", workspace=_workspace(tmp_path, pool_size_now=1500))
    assert record.params_not_rerun == {}
    assert "edited since this run" not in audit_markdown(record)


def test_nothing_to_audit_is_an_error(tmp_path):
    with pytest.raises(PipelineError, match=r"nothing to audit: dvc\.lock records a run of mrmc"):
        audit_record("mrmc", workspace=_workspace(tmp_path, 1500, with_claims=False))
    (tmp_path / "dvc.lock").write_text(yaml.safe_dump({"schema": "2.0", "stages": {}}))
    with pytest.raises(PipelineError, match=r"nothing to audit: dvc\.lock has no stage of mrmc"):
        audit_record("mrmc", workspace=tmp_path)


def test_a_recorded_section_is_spread_into_its_leaves():
    lock = {"s": {"params": {"params.yaml": {"p.train": {"epochs": 3, "opt": {"lr": 0.1}}, "p.n": 5}}}}
    flat = recorded_params(lock, ["s"])
    assert flat == {"p.n": 5, "p.train.epochs": 3, "p.train.opt.lr": 0.1}
    assert unflatten(flat) == {"p": {"n": 5, "train": {"epochs": 3, "opt": {"lr": 0.1}}}}


def test_a_folder_without_dvc_lock_is_named(tmp_path):
    with pytest.raises(PipelineError, match=r"nothing to audit: .*dvc\.lock does not exist"):
        audit_record("mrmc", workspace=tmp_path)
