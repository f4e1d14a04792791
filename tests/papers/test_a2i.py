"""The A2I paper: params errors and the claims logic on made-up runs."""

from __future__ import annotations

import polars as pl
import pytest

from stages.core.errors import ParamsError
from stages.core.params import read_params_file, validate_section
from stages.papers.a2i.claims import all_claims
from stages.papers.a2i.params import A2IParams
from tests.conftest import REPO_ROOT


def params(**changes) -> A2IParams:
    raw = read_params_file(REPO_ROOT / "params.yaml")["a2i"]
    raw.update(changes)
    return validate_section(A2IParams, raw, "a2i")


def test_params_name_the_bad_key():
    with pytest.raises(ParamsError, match="a2i"):
        params(default={"objectives": ["rnp"]})
    with pytest.raises(ParamsError, match="a2i"):
        params(default={"datasets": ["beer"]})
    with pytest.raises(ParamsError, match="a2i"):
        params(claims={"attack_chance": 0.4})


def made_up_runs(rnp: dict, a2i: dict) -> pl.DataFrame:
    rows = []
    for dataset in ("reviews", "motifs", "rotten_tomatoes"):
        for objective, values in (("rnp", rnp), ("a2i", a2i)):
            for seed in range(3):
                row = {key: value + 0.01 * seed for key, value in values.items()}
                if dataset != "reviews":
                    row["selection_gap"] = None
                rows.append({"dataset": dataset, "objective": objective, "seed": seed, **row})
    return pl.DataFrame(rows)


def test_claims_hold_and_fail_on_made_up_results():
    good = made_up_runs(
        {"f1": 0.5, "sparsity": 0.12, "accuracy": 0.9, "attack_success": 0.85, "selection_gap": 0.4},
        {"f1": 0.7, "sparsity": 0.125, "accuracy": 0.9, "attack_success": 0.5, "selection_gap": 0.05},
    )
    verdicts = {claim.id: claim.verdict for claim in all_claims(good, params())}
    assert verdicts == dict.fromkeys(
        ("sampling_bias", "inspection", "instruction", "f1_text", "f1_graphs"), "holds"
    )
    bad = made_up_runs(
        {"f1": 0.7, "sparsity": 0.12, "accuracy": 0.9, "attack_success": 0.5, "selection_gap": 0.02},
        {"f1": 0.5, "sparsity": 0.2, "accuracy": 0.8, "attack_success": 0.9, "selection_gap": 0.3},
    )
    verdicts = {claim.id: claim.verdict for claim in all_claims(bad, params())}
    assert set(verdicts.values()) == {"fails"}


def test_one_seed_is_inconclusive():
    one = made_up_runs(
        {"f1": 0.5, "sparsity": 0.12, "accuracy": 0.9, "attack_success": 0.85, "selection_gap": 0.4},
        {"f1": 0.7, "sparsity": 0.125, "accuracy": 0.9, "attack_success": 0.5, "selection_gap": 0.05},
    ).filter(pl.col("seed") == 0)
    assert {claim.verdict for claim in all_claims(one, params())} == {"inconclusive"}
