"""Claims with uncertainty: intervals over seeds, the three-verdict rule, the claims file and the report."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from pydantic import ValidationError
from scipy import stats

from stages.core.claims import (
    Claim,
    Evidence,
    combine,
    compare,
    compare_bounded,
    compare_paired,
    decide,
    judge,
    paired_differences,
    paired_t_interval,
    read_claims,
    t_interval,
    too_few_seeds,
    verdict_claim,
    verdict_counts,
    welch_interval,
    write_claims,
)
from stages.report import claims_table

# t_{0.975, 2} = 4.302652729749462; for 1, 2, 3: mean 2, s = 1, half-width 4.30265 / √3 = 2.484138
HALF_123 = 4.302652729749462 / math.sqrt(3)


def test_t_interval_matches_the_hand_computed_one():
    lower, upper = t_interval([1.0, 2.0, 3.0])
    assert lower == pytest.approx(2 - HALF_123) and upper == pytest.approx(2 + HALF_123)
    assert lower == pytest.approx(-0.4841377, abs=1e-6)
    # a 90 % interval is narrower: t_{0.95, 2} = 2.919986
    lower90, upper90 = t_interval([1.0, 2.0, 3.0], confidence=0.9)
    assert (lower90, upper90) == pytest.approx(
        (2 - 2.919986 / math.sqrt(3), 2 + 2.919986 / math.sqrt(3)), rel=1e-6
    )


def test_t_interval_needs_two_values_and_collapses_on_identical_ones():
    assert t_interval([0.7]) is None
    assert t_interval([]) is None
    assert t_interval([0.5, 0.5, 0.5]) == (0.5, 0.5)
    assert too_few_seeds(1) and too_few_seeds(0) and not too_few_seeds(2)
    with pytest.raises(ValueError, match="finite"):
        t_interval([1.0, float("nan")])
    with pytest.raises(ValueError, match="confidence"):
        t_interval([1.0, 2.0], confidence=95)


def test_paired_interval_is_the_interval_of_the_per_seed_differences():
    first, second = {"0": 3.0, "1": 5.0, "2": 4.0}, {"0": 1.0, "1": 2.0, "2": 3.0}
    assert paired_differences(first, second) == {"0": 2.0, "1": 3.0, "2": 1.0}
    lower, upper = paired_t_interval(first, second)
    assert (lower, upper) == pytest.approx((2 - HALF_123, 2 + HALF_123))
    with pytest.raises(ValueError, match="same seeds"):
        paired_differences({"0": 1.0, "1": 2.0}, {"0": 1.0, "2": 2.0})


def test_welch_interval_agrees_with_scipy_on_raw_samples():
    rng = np.random.default_rng(0)
    a, b = rng.normal(10, 2, size=10), rng.normal(8, 3, size=12)
    expected = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    lower, upper = welch_interval(a.mean(), a.std(ddof=1), len(a), b.mean(), b.std(ddof=1), len(b))
    assert (lower, upper) == pytest.approx((expected.low, expected.high))
    assert welch_interval(1.0, 0.1, 1, 0.0, 0.1, 5) is None


@pytest.mark.parametrize(
    ("lower", "upper", "threshold", "direction", "verdict"),
    [
        (0.1, 0.3, 0.0, "above", "holds"),
        (-0.3, -0.1, 0.0, "above", "fails"),
        (-0.1, 0.3, 0.0, "above", "inconclusive"),
        (0.0, 0.3, 0.0, "above", "inconclusive"),  # touching the threshold is not clearing it
        (1.1, 1.2, 1.5, "below", "holds"),
        (1.6, 2.0, 1.5, "below", "fails"),
        (1.4, 1.6, 1.5, "below", "inconclusive"),
    ],
)
def test_judge(lower, upper, threshold, direction, verdict):
    assert judge(lower, upper, threshold, direction) == verdict


def test_judge_rejects_a_reversed_interval_and_an_unknown_direction():
    with pytest.raises(ValueError, match="lower end above upper end"):
        judge(1.0, 0.0, 0.5, "above")
    with pytest.raises(ValueError, match="direction"):
        judge(0.0, 1.0, 0.5, "sideways")


def test_combine_any_fail_fails_all_hold_holds_else_inconclusive():
    assert combine(["holds", "holds"]) == "holds"
    assert combine(["holds", "inconclusive", "fails"]) == "fails"
    assert combine(["holds", "inconclusive"]) == "inconclusive"
    assert combine([]) == "inconclusive"


def test_a_difference_inside_the_seed_noise_is_inconclusive():
    # semi-supervised needs 173 fewer annotations on average, but one seed needs 400 more: within the noise
    supervised = {"0": 5000.0, "1": 5200.0, "2": 4600.0}
    semi = {"0": 4600.0, "1": 4680.0, "2": 5000.0}
    evidence = compare_paired("supervised − semi annotations", supervised, semi, 0.0, "above")
    assert evidence.per_seed == {"0": 400.0, "1": 520.0, "2": -400.0}
    assert evidence.mean == pytest.approx(520 / 3)
    assert evidence.interval[0] < 0 < evidence.interval[1]
    assert evidence.verdict == "inconclusive"
    verdict, reason = decide([evidence])
    assert verdict == "inconclusive" and "inside the noise" in reason


def test_a_clear_win_holds_and_a_clear_loss_fails():
    win = compare_paired("ours − baseline accuracy", {"0": 0.81, "1": 0.83, "2": 0.82}, {"0": 0.7, "1": 0.71, "2": 0.7},
                         0.0, "above")  # fmt: skip
    assert win.verdict == "holds" and win.interval[0] > 0
    loss = compare_paired("ours − baseline accuracy", {"0": 0.6, "1": 0.61, "2": 0.6}, {"0": 0.7, "1": 0.71, "2": 0.7},
                          0.0, "above")  # fmt: skip
    assert loss.verdict == "fails" and loss.interval[1] < 0
    verdict, reason = decide([win, loss])
    assert verdict == "fails" and reason.startswith("It fails because ours − baseline accuracy")


def test_one_seed_is_inconclusive_however_large_the_difference():
    evidence = compare("ours − baseline accuracy", {0: 0.5}, 0.0, "above")
    assert evidence.interval is None and evidence.mean == 0.5 and evidence.per_seed == {"0": 0.5}
    assert evidence.verdict == "inconclusive"
    assert "1 seed, too few for an interval" in decide([evidence])[1]


def test_bounded_values_decide_only_when_the_bounds_cannot_overturn_the_verdict():
    # baseline − ours annotations; seed 2's baseline never reached, so its difference is only a lower bound
    lower_bounded = {"0": (1000.0, "exact"), "1": (1100.0, "exact"), "2": (900.0, "lower")}
    assert compare_bounded("baseline − ours", lower_bounded, 0.0, "above").verdict == "holds"
    assert compare_bounded("baseline − ours", lower_bounded, 5000.0, "below").verdict == "inconclusive"
    upper_bounded = {"0": (-1000.0, "exact"), "1": (-1100.0, "exact"), "2": (-900.0, "upper")}
    assert compare_bounded("x", upper_bounded, 0.0, "above").verdict == "fails"
    assert compare_bounded("x", upper_bounded, -5000.0, "above").verdict == "inconclusive"
    unknown = {"0": (1000.0, "exact"), "1": (1100.0, "exact"), "2": (None, "exact")}
    evidence = compare_bounded("x", unknown, 0.0, "above")
    assert evidence.verdict == "inconclusive" and "seed 2 unknown" in evidence.note


def test_claim_verdict_holds_property_and_file_round_trip(tmp_path):
    evidence = [compare("gap", {"0": 0.1, "1": 0.12, "2": 0.11}, 0.0, "above")]
    claim = verdict_claim(
        "gap_positive", "The gap is positive.", "t interval above 0", {"gap": 0.11}, evidence
    )
    assert claim.verdict == "holds" and claim.holds and claim.reason.startswith("It holds: gap = 0.11 [")
    path = tmp_path / "claims.json"
    write_claims([claim], path)
    stored = json.loads(path.read_text())[0]
    assert stored["verdict"] == "holds" and "holds" not in stored
    assert stored["evidence"][0]["interval"] == pytest.approx(list(evidence[0].interval))
    assert read_claims(path) == [claim]
    with pytest.raises(ValidationError):
        Claim(id="x", statement="s", measured={}, criterion="c", verdict="maybe", reason="r")
    with pytest.raises(ValidationError):
        Evidence(name="x", verdict="holds", interval=(1.0, 0.0))
    with pytest.raises(ValueError, match="duplicate"):
        write_claims([claim, claim], path)


def _claim(id: str, per_seed: dict[str, float]) -> Claim:
    return verdict_claim(
        id,
        f"Statement of {id}.",
        "interval above 0",
        {"n": len(per_seed)},
        [compare("gap", per_seed, 0.0, "above")],
    )


def test_claims_report_counts_verdicts_and_reads_as_prose():
    claims = {
        "paper_a": [_claim("wins", {"0": 0.1, "1": 0.11, "2": 0.12}), _claim("noisy", {"0": 0.1, "1": -0.1})],
        "paper_b": [_claim("loses", {"0": -0.1, "1": -0.11, "2": -0.12}), _claim("single", {"0": 0.3})],
    }
    text = claims_table(claims)
    assert verdict_counts([c for cs in claims.values() for c in cs]) == {
        "holds": 1,
        "fails": 1,
        "inconclusive": 2,
    }
    assert "4 claims in 2 papers: 1 holds, 1 fails, 2 inconclusive." in text
    assert "| paper_a | 1 | 0 | 1 |" in text and "| paper_b | 0 | 1 | 1 |" in text
    assert "### `noisy` — **inconclusive**" in text and "> Statement of noisy." in text
    assert "**Fails.** It fails because gap" in text
    assert "0: 0.1, 1: 0.11, 2: 0.12" in text and "(t 95% over seeds)" in text
    assert "{" not in text  # no JSON blobs
    # a claim without evidence shows its measured numbers as a sentence
    bare = Claim(
        id="bare", statement="S.", measured={"a": {"b": 0.5}}, criterion="c", verdict="fails", reason="R."
    )
    assert "Measured: a.b = 0.5." in claims_table({"p": [bare]})


def test_a_holding_claim_names_its_closest_comparison():
    far = compare("far", {"0": 1.0, "1": 1.1, "2": 0.9}, 0.0, "above")
    near = compare("near", {"0": 0.06, "1": 0.08, "2": 0.07}, 0.03, "above")
    verdict, reason = decide([far, near])
    assert verdict == "holds"
    assert reason.startswith("All 2 compared quantities clear their thresholds; the closest: near = 0.07 [")


def test_claims_about_time_show_in_their_own_report_and_in_the_paper_artifact(tmp_path):
    from flows.paper_flow import results_markdown
    from stages.core.claims import write_claims
    from stages.papers.registry import PAPERS

    paper = PAPERS.get("mrmc")
    timed = Claim(
        id="selection_cost", statement="S.", measured={"s": 1.0}, criterion="c", verdict="holds", reason="R."
    )
    kept = Claim(
        id="accuracy_vs_random",
        statement="A.",
        measured={"a": 0.9},
        criterion="c",
        verdict="holds",
        reason="R.",
    )
    (tmp_path / paper.timing_claims_path).parent.mkdir(parents=True)
    write_claims([kept], tmp_path / paper.claims_path)
    write_claims([timed], tmp_path / paper.timing_claims_path)
    text = results_markdown("mrmc", tmp_path)
    data_part, _, timing_part = text.partition("# Claims about wall-clock time")
    assert "`accuracy_vs_random`" in data_part and "selection_cost" not in data_part
    assert "`selection_cost`" in timing_part and "mrmc-timing" in timing_part
    assert PAPERS.get("fdiv_losses").timing_claims_path is None  # no claim about time, no timing step
