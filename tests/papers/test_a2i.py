"""The A2I paper: params errors and the claims logic on made-up runs."""

from __future__ import annotations

import polars as pl
import pytest

from stages.core.claims import DesignError, t_interval
from stages.core.errors import ParamsError
from stages.core.params import read_params_file, validate_section
from stages.papers.a2i.claims import all_claims, attack_claim, bias_claim, f1_claim
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


def made_up_runs(rnp: dict, a2i: dict, seeds: int = 3) -> pl.DataFrame:
    rows = []
    for dataset in ("reviews", "motifs", "rotten_tomatoes"):
        for objective, values in (("rnp", rnp), ("a2i", a2i)):
            for seed in range(seeds):
                row = {key: value + 0.01 * seed for key, value in values.items()}
                if dataset != "reviews":
                    row["selection_gap"] = None
                rows.append({"dataset": dataset, "objective": objective, "seed": seed, **row})
    return pl.DataFrame(rows)


BY_DESIGN = ("inspection", "instruction")


def test_claims_hold_and_fail_on_made_up_results():
    good = made_up_runs(
        {"f1": 0.5, "sparsity": 0.12, "accuracy": 0.9, "attack_success": 0.85, "selection_gap": 0.4},
        {"f1": 0.7, "sparsity": 0.125, "accuracy": 0.9, "attack_success": 0.5, "selection_gap": 0.05},
    )
    claims = all_claims(good, params())
    verdicts = {claim.id: claim.verdict for claim in claims}
    assert verdicts == {
        "sampling_bias": "holds",
        "inspection": "inconclusive",
        "instruction": "inconclusive",
        "f1_text": "holds",
        "f1_graphs": "holds",
    }
    for claim in claims:
        assert claim.unit == "seed" and claim.n == 3
        assert len(claim.could_hold) >= 10 and len(claim.could_fail) >= 10
    bad = made_up_runs(
        {"f1": 0.7, "sparsity": 0.12, "accuracy": 0.9, "attack_success": 0.5, "selection_gap": 0.02},
        {"f1": 0.5, "sparsity": 0.2, "accuracy": 0.8, "attack_success": 0.9, "selection_gap": 0.3},
    )
    verdicts = {claim.id: claim.verdict for claim in all_claims(bad, params())}
    assert {key: value for key, value in verdicts.items() if key not in BY_DESIGN} == dict.fromkeys(
        ("sampling_bias", "f1_text", "f1_graphs"), "fails"
    )


def test_attack_claims_are_inconclusive_by_design_whatever_the_numbers():
    # attack success on the balanced reviews cannot exceed 0.5, and Rotten Tomatoes decides nothing
    for rnp_attack, a2i_attack in ((0.95, 0.1), (0.3, 0.9)):
        runs = made_up_runs(
            {
                "f1": 0.5,
                "sparsity": 0.12,
                "accuracy": 0.9,
                "attack_success": rnp_attack,
                "selection_gap": 0.4,
            },
            {
                "f1": 0.7,
                "sparsity": 0.12,
                "accuracy": 0.9,
                "attack_success": a2i_attack,
                "selection_gap": 0.05,
            },
        )
        claims = {claim.id: claim for claim in all_claims(runs, params())}
        for claim_id in BY_DESIGN:
            claim = claims[claim_id]
            assert claim.verdict == "inconclusive" and claim.reason.startswith("Inconclusive by design")
            assert "0.5" in claim.reason and "Rotten Tomatoes decides nothing" in claim.reason
            assert all(low >= 0 and high <= 1 for low, high in (e.interval for e in claim.evidence))


def test_selection_gap_is_judged_by_a_t_interval_kept_in_range():
    # a t interval over these three gaps reaches below 0 (an impossible gap) and straddles 0.2
    def gap_claim(gaps: list[float]):
        runs = made_up_runs(
            {"f1": 0.5, "sparsity": 0.12, "accuracy": 0.9, "attack_success": 0.5, "selection_gap": 0.0},
            {"f1": 0.7, "sparsity": 0.12, "accuracy": 0.9, "attack_success": 0.5, "selection_gap": 0.0},
        ).with_columns(
            pl.when((pl.col("dataset") == "reviews") & (pl.col("objective") == "rnp"))
            .then(pl.col("seed").replace_strict(dict(enumerate(gaps)), return_dtype=pl.Float64))
            .otherwise(pl.col("selection_gap"))
            .alias("selection_gap")
        )
        return bias_claim(runs, params())

    low_gaps = [0.01, 0.02, 0.15]
    assert t_interval(low_gaps)[0] < 0
    claim = gap_claim(low_gaps)
    rnp = claim.evidence[0]
    assert "clipped to [0, 1]" in rnp.interval_kind and rnp.interval[0] == 0 <= rnp.interval[1] <= 1
    assert rnp.verdict == "inconclusive"  # the clipped interval still reaches above 0.2
    clear_gaps = [0.01, 0.02, 0.03]
    assert gap_claim(clear_gaps).evidence[0].verdict == "fails"
    high_gaps = [0.5, 0.55, 0.6]
    claim = gap_claim(high_gaps)
    assert claim.evidence[0].verdict == "holds" and claim.verdict == "holds"  # A2I's gap 0 on every seed
    assert claim.detectable["RNP selection-rate gap of '.'/'-' (reviews, test)"] > 0


def test_one_seed_is_refused_where_a_t_interval_is_needed():
    one = made_up_runs(
        {"f1": 0.5, "sparsity": 0.12, "accuracy": 0.9, "attack_success": 0.85, "selection_gap": 0.4},
        {"f1": 0.7, "sparsity": 0.125, "accuracy": 0.9, "attack_success": 0.5, "selection_gap": 0.05},
        seeds=1,
    )
    with pytest.raises(DesignError, match="sampling_bias"):
        all_claims(one, params())
    with pytest.raises(DesignError, match="f1_text"):
        f1_claim(one, params(), "reviews", "f1_text")
    assert attack_claim(one, params(), "rnp").verdict == "inconclusive"
