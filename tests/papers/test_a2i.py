"""The A2I paper: params errors and the claims logic on made-up runs."""

from __future__ import annotations

import polars as pl
import pytest

from stages.core.claims import DesignError, t_interval
from stages.core.errors import ParamsError
from stages.core.params import read_params_file, validate_section
from stages.papers.a2i.claims import all_claims, bias_claim, f1_claim, inspection_claim
from stages.papers.a2i.figures import attack_by_class, attack_markdown
from stages.papers.a2i.params import A2IParams
from tests.conftest import REPO_ROOT


def params(**changes) -> A2IParams:
    raw = read_params_file(REPO_ROOT / "params.yaml")["a2i"]
    raw["default"]["datasets"] = ["reviews", "motifs", "rotten_tomatoes"]
    raw.update(changes)
    return validate_section(A2IParams, raw, "a2i")


def test_params_name_the_bad_key():
    with pytest.raises(ParamsError, match="a2i"):
        params(default={"objectives": ["rnp"]})
    with pytest.raises(ParamsError, match="a2i"):
        params(default={"datasets": ["beer"]})
    with pytest.raises(ParamsError, match="a2i"):
        params(claims={"attack_chance": 0.4})
    with pytest.raises(ParamsError, match="a2i"):
        params(claims={"informative_accuracy": 0.5})


GOOD_RNP = {"f1": 0.5, "sparsity": 0.12, "accuracy": 0.9, "worst": 0.85, "best": 0.95, "gap": 0.6}
GOOD_A2I = {"f1": 0.7, "sparsity": 0.125, "accuracy": 0.9, "worst": 0.1, "best": 0.3, "gap": 0.05}


def made_up_runs(rnp: dict, a2i: dict, seeds: int = 3, full: dict | None = None) -> pl.DataFrame:
    """Runs of every set: per seed the given values (+0.01·seed), the full-input classifier's dev accuracy."""
    full = full or {}
    rows = []
    for dataset in ("reviews", "motifs", "rotten_tomatoes"):
        for objective, values in (("rnp", rnp), ("a2i", a2i)):
            for seed in range(seeds):
                v = {key: value + 0.01 * seed for key, value in values.items()}
                row = {
                    "f1": v["f1"],
                    "sparsity": v["sparsity"],
                    "accuracy": v["accuracy"],
                    "attack_success_worst": v["worst"],
                    "attack_success_best": v["best"],
                    "attack_success_0": v["worst"],
                    "attack_success_1": v["best"],
                    "attack_success": (v["worst"] + v["best"]) / 2,
                    "no_label_token_gap": v["gap"] if dataset == "reviews" else None,
                    "planted_attack_worst": v.get("planted", 0.95) if dataset == "reviews" else None,
                }
                rows.append({"dataset": dataset, "objective": objective, "seed": seed, **row})
        for seed in range(seeds):
            rows.append(
                {
                    "dataset": dataset,
                    "objective": "full",
                    "seed": seed,
                    "dev_accuracy": full.get(dataset, 0.95),
                }
            )
    return pl.DataFrame(rows, infer_schema_length=None)


def verdicts(runs: pl.DataFrame, scale: str = "full") -> dict[str, str]:
    return {claim.id: claim.verdict for claim in all_claims(runs, params(scale=scale))}


def test_claims_hold_and_fail_on_made_up_results():
    claims = all_claims(made_up_runs(GOOD_RNP, GOOD_A2I), params(scale="full"))
    assert {claim.id: claim.verdict for claim in claims} == dict.fromkeys(
        ("sampling_bias", "inspection", "instruction", "f1_text", "f1_graphs"), "holds"
    )
    for claim in claims:
        assert claim.unit == "seed" and claim.n == 3
        assert len(claim.could_hold) >= 10 and len(claim.could_fail) >= 10
    bad_rnp = {"f1": 0.7, "sparsity": 0.12, "accuracy": 0.9, "worst": 0.1, "best": 0.95, "gap": 0.02}
    bad_a2i = {"f1": 0.5, "sparsity": 0.2, "accuracy": 0.8, "worst": 0.5, "best": 0.9, "gap": 0.3}
    found = verdicts(made_up_runs(bad_rnp, bad_a2i))
    assert found == {
        "sampling_bias": "fails",
        "inspection": "fails",
        "instruction": "inconclusive",  # judged only where inspection holds
        "f1_text": "fails",
        "f1_graphs": "fails",
    }


def test_graph_f1_is_inconclusive_by_design_at_the_default_scale():
    for rnp, a2i in ((GOOD_RNP, GOOD_A2I), ({**GOOD_RNP, "f1": 0.9}, GOOD_A2I)):
        claim = {c.id: c for c in all_claims(made_up_runs(rnp, a2i), params())}["f1_graphs"]
        assert claim.verdict == "inconclusive" and "only `scale: full` can decide it" in claim.reason
        assert claim.evidence  # the evidence is still recorded


def test_graph_f1_without_graph_runs_is_inconclusive_and_says_where_it_is_judged():
    raw = read_params_file(REPO_ROOT / "params.yaml")["a2i"]
    raw["default"]["datasets"] = ["reviews"]
    claims = {
        c.id: c for c in all_claims(made_up_runs(GOOD_RNP, GOOD_A2I), validate_section(A2IParams, raw, "a2i"))
    }
    graphs = claims["f1_graphs"]
    assert graphs.verdict == "inconclusive" and graphs.n == 0 and not graphs.evidence
    assert "run only at `scale: full`" in graphs.reason
    assert claims["f1_text"].verdict == "holds"  # the reviews still decide their own claims


def test_inspection_reads_the_worst_class_not_the_pooled_share():
    # a predictor defaulting to one class: pooled 0.5, per class 0.0 / 1.0 -> the attack does not work on both
    defaulting = {**GOOD_RNP, "worst": 0.0, "best": 0.98}
    runs = made_up_runs(defaulting, GOOD_A2I)
    assert runs.filter(pl.col("objective") == "rnp")["attack_success"].mean() == pytest.approx(0.5, abs=0.02)
    assert verdicts(runs)["inspection"] == "fails"


def test_inspection_is_the_trained_attacker_with_the_planted_rationale_beside():
    # the planted rationale flips both classes, the trained attacker only one: inspection fails, and the planted
    # shares are recorded (a flip existed that the attacker missed), not judged
    reviews_only = {"rotten_tomatoes": 0.5}  # Rotten Tomatoes excluded: the reviews only
    runs = made_up_runs({**GOOD_RNP, "worst": 0.1, "planted": 0.98}, GOOD_A2I, full=reviews_only)
    claim = inspection_claim(runs, params())
    assert [e.verdict for e in claim.evidence] == ["fails"] and claim.verdict == "fails"
    assert "planted_attack_0" in claim.measured["reviews"]
    # a predictor robust to the planted words but flipped by what the attacker selects: inspection holds
    claim = inspection_claim(
        made_up_runs({**GOOD_RNP, "planted": 0.1}, GOOD_A2I, full=reviews_only), params()
    )
    assert [e.verdict for e in claim.evidence] == ["holds"] and claim.verdict == "holds"


def test_instruction_is_judged_only_where_inspection_holds():
    weak = {**GOOD_RNP, "worst": 0.2}
    for a2i_best in (0.1, 0.95):  # whatever A2I does
        claims = {c.id: c for c in all_claims(made_up_runs(weak, {**GOOD_A2I, "best": a2i_best}), params())}
        assert claims["inspection"].verdict == "fails"
        assert claims["instruction"].verdict == "inconclusive"
        assert "only on sets where inspection holds" in claims["instruction"].reason
    # the instruction fails when A2I leaves one class open (the weakness moved, not removed)
    moved = {**GOOD_A2I, "worst": 0.05, "best": 0.9}
    assert verdicts(made_up_runs(GOOD_RNP, moved))["instruction"] == "fails"


def test_sets_where_the_full_input_model_is_near_chance_decide_nothing():
    runs = made_up_runs(GOOD_RNP, GOOD_A2I, full={"rotten_tomatoes": 0.58})
    inspection = inspection_claim(runs, params())
    assert [e.name.split(" (")[0] for e in inspection.evidence] == ["RNP worst-class"]
    assert all("rotten" not in e.name for e in inspection.evidence)
    assert "decides nothing" in inspection.measured["rotten_tomatoes"]["informative"]
    chance = made_up_runs(GOOD_RNP, GOOD_A2I, full={"reviews": 0.6, "rotten_tomatoes": 0.6, "motifs": 0.6})
    claims = {c.id: c for c in all_claims(chance, params())}
    for claim in claims.values():
        assert claim.verdict == "inconclusive" and "Inconclusive by" in claim.reason


def test_bias_gap_is_judged_by_a_t_interval_kept_in_range():
    # a t interval over these three gaps reaches below 0 (an impossible gap) and straddles 0.2
    def gap_claim(gaps: list[float]):
        runs = made_up_runs(GOOD_RNP, {**GOOD_A2I, "gap": 0.0}).with_columns(
            pl.when((pl.col("dataset") == "reviews") & (pl.col("objective") == "rnp"))
            .then(pl.col("seed").replace_strict(dict(enumerate(gaps)), return_dtype=pl.Float64))
            .otherwise(pl.col("no_label_token_gap"))
            .alias("no_label_token_gap")
        )
        return bias_claim(runs, params())

    low_gaps = [0.01, 0.02, 0.15]
    assert t_interval(low_gaps)[0] < 0
    rnp = gap_claim(low_gaps).evidence[0]
    assert "clipped to [0, 1]" in rnp.interval_kind and rnp.interval[0] == 0 <= rnp.interval[1] <= 1
    assert rnp.verdict == "inconclusive"  # the clipped interval still reaches above 0.2
    assert gap_claim([0.01, 0.02, 0.03]).evidence[0].verdict == "fails"
    claim = gap_claim([0.5, 0.55, 0.6])
    assert claim.evidence[0].verdict == "holds" and claim.verdict == "holds"
    assert all(value is not None and value > 0 for value in claim.detectable.values())


def test_one_seed_is_refused_where_a_t_interval_is_needed():
    one = made_up_runs(GOOD_RNP, GOOD_A2I, seeds=1)
    with pytest.raises(DesignError, match="sampling_bias"):
        bias_claim(one, params())
    with pytest.raises(DesignError, match="f1_text"):
        f1_claim(one, params(), "reviews", "f1_text")
    with pytest.raises(DesignError, match="inspection"):
        inspection_claim(one, params())


def test_per_class_attack_table():
    runs = made_up_runs(GOOD_RNP, GOOD_A2I)
    table = attack_by_class(runs)
    assert len(table) == 3 * 2 * 3 and {row["objective"] for row in table} == {"rnp", "a2i"}
    first = table[0]
    assert first["worst_class"] == min(first["class_0"], first["class_1"])
    text = attack_markdown(table)
    assert text.count("\n| ") == len(table) + 1 and "worst class" in text
