"""The MRMC pipeline at default params through `dvc repro`, in a scratch copy (about 5-12 minutes on 2 cores)."""

from __future__ import annotations

import json

import pytest

from stages.core.claims import read_claims
from stages.core.dvc_cli import run_dvc
from stages.platform.smoke import scratch_copy

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_default_params_reproduce_end_to_end(tmp_path, repo_root):
    workspace = scratch_copy(repo_root, tmp_path / "ws")
    run_dvc(["repro", "mrmc-claims", "mrmc-timing"], workspace)
    timing = read_claims(workspace / "data/mrmc/timings/claims.json")
    assert [claim.id for claim in timing] == ["selection_cost"]
    claims = {claim.id: claim for claim in read_claims(workspace / "data/mrmc/claims.json")}
    assert set(claims) == {
        "accuracy_vs_random",
        "accuracy_vs_baselines",
        "regulariser_vs_pure_mrmc",
        "accuracy_vs_random_small_budgets",
        "class_quotas_lift_pure_mrmc",
    }
    metrics = json.loads((workspace / "data/mrmc/metrics.json").read_text())
    assert metrics["full"]["all"]["mean_accuracy"] > 0.7  # a small CNN on 1,500 Fashion-MNIST images
    assert claims["class_quotas_lift_pure_mrmc"].measured["class_count_ratio_quota"] == pytest.approx(1.0)
