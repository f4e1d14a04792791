"""Claims with uncertainty: intervals over seeds, the three-verdict rule, the claims file and the report."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from scipy import stats

from stages.core.claims import (
    Claim,
    DesignError,
    Evidence,
    bootstrap_interval,
    combine,
    compare,
    compare_best,
    compare_bootstrap,
    compare_bounded,
    compare_every,
    compare_paired,
    compare_paired_bootstrap,
    compare_permutation,
    compare_proportion,
    compare_ratio,
    decide,
    judge,
    log_ratio_interval,
    paired_differences,
    paired_t_interval,
    permutation_interval,
    permutation_p,
    read_claims,
    smallest_permutation_p,
    t_interval,
    too_few_seeds,
    verdict_claim,
    verdict_counts,
    welch_interval,
    wilson_interval,
    write_claims,
)
from stages.platform.report import claims_table

BARE_DESIGN = {
    "could_hold": "the value can come out above",
    "could_fail": "the value can come out below",
    "unit": "seed",
    "n": 3,
    "detectable": {},
}

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


def test_t_interval_needs_three_values_and_collapses_on_identical_ones():
    assert t_interval([0.7]) is None and t_interval([0.7, 0.8]) is None
    assert t_interval([]) is None
    assert t_interval([0.5, 0.5, 0.5]) == (0.5, 0.5)
    assert too_few_seeds(2) and too_few_seeds(0) and not too_few_seeds(3)
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


def test_one_seed_gets_no_interval_however_large_the_difference():
    evidence = compare("ours − baseline accuracy", {0: 0.5}, 0.0, "above")
    assert evidence.interval is None and evidence.mean == 0.5 and evidence.per_seed == {"0": 0.5}
    assert evidence.verdict == "inconclusive" and evidence.refused
    assert "1 unit, too few for an interval" in decide([evidence])[1]


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
        "gap_positive", "The gap is positive.", "t interval above 0", {"gap": 0.11}, evidence, **DESIGN
    )
    assert claim.verdict == "holds" and claim.holds and claim.reason.startswith("It holds: gap = 0.11 [")
    path = tmp_path / "claims.json"
    write_claims([claim], path)
    stored = json.loads(path.read_text())[0]
    assert stored["verdict"] == "holds" and "holds" not in stored
    assert stored["evidence"][0]["interval"] == pytest.approx(list(evidence[0].interval))
    assert read_claims(path) == [claim]
    with pytest.raises(ValidationError):
        Claim(id="x", statement="s", measured={}, criterion="c", verdict="maybe", reason="r", **BARE_DESIGN)
    with pytest.raises(ValidationError):
        Evidence(name="x", verdict="holds", interval=(1.0, 0.0))
    with pytest.raises(ValueError, match="duplicate"):
        write_claims([claim, claim], path)


def _claim(id: str, per_seed: dict[str, float]) -> Claim:
    if len(per_seed) < 3:  # the design cannot support a t interval: inconclusive by design
        return verdict_claim(
            id,
            f"Statement of {id}.",
            "interval above 0",
            {"n": len(per_seed)},
            [],
            **DESIGN,
            n=len(per_seed),
            verdict="inconclusive",
            reason=f"{len(per_seed)} seeds are too few for an interval.",
        )
    return verdict_claim(
        id,
        f"Statement of {id}.",
        "interval above 0",
        {"n": len(per_seed)},
        [compare("gap", per_seed, 0.0, "above")],
        **DESIGN,
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
    assert "Unit: seed, n = 3. Detectable: gap: ±0.02484." in text
    assert "Could hold: the gap can come out positive Could fail: the gap can come out negative" in text
    assert "{" not in text  # no JSON blobs
    # a claim without evidence shows its measured numbers as a sentence
    bare = Claim(
        id="bare", statement="S.", measured={"a": {"b": 0.5}}, criterion="c", verdict="fails", reason="R.",
        **BARE_DESIGN,
    )  # fmt: skip
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
        id="selection_cost", statement="S.", measured={"s": 1.0}, criterion="c", verdict="holds", reason="R.",
        **BARE_DESIGN,
    )  # fmt: skip
    kept = Claim(
        id="accuracy_vs_random",
        statement="A.",
        measured={"a": 0.9},
        criterion="c",
        verdict="holds",
        reason="R.",
        **BARE_DESIGN,
    )
    (tmp_path / paper.timing_claims_path).parent.mkdir(parents=True)
    write_claims([kept], tmp_path / paper.claims_path)
    write_claims([timed], tmp_path / paper.timing_claims_path)
    text = results_markdown("mrmc", tmp_path)
    data_part, _, timing_part = text.partition("# Claims about wall-clock time")
    assert "`accuracy_vs_random`" in data_part and "selection_cost" not in data_part
    assert "`selection_cost`" in timing_part and "mrmc-timing" in timing_part
    assert PAPERS.get("fdiv_losses").timing_claims_path is None  # no claim about time, no timing step


# ------------------------------------------------------------------- the design rules of shared/CLAIMS.md

DESIGN = {
    "could_hold": "the gap can come out positive",
    "could_fail": "the gap can come out negative",
    "unit": "seed",
}


def test_a_t_interval_over_fewer_than_three_units_is_refused_naming_the_claim():
    evidence = compare("gap", {"0": 0.1, "1": 0.2}, 0.0, "above")
    assert evidence.interval is None and "needs ≥ 3" in evidence.refused
    with pytest.raises(DesignError, match="claim 'two_seeds': refused gap: a t interval over 2 units"):
        verdict_claim("two_seeds", "s", "c", {}, [evidence], **DESIGN)
    assert t_interval([1.0, 2.0]) is None and too_few_seeds(2) and not too_few_seeds(3)


def test_a_claim_records_its_design_and_the_contract_requires_it():
    evidence = [compare("gap", {"0": 1.0, "1": 2.0, "2": 3.0}, 0.0, "above")]
    claim = verdict_claim("gap", "s", "c", {}, evidence, **DESIGN)
    assert claim.n == 3 and claim.unit == "seed"
    assert claim.detectable == {"gap": pytest.approx(HALF_123)}
    for missing in ("could_hold", "could_fail", "unit"):
        fields = {key: value for key, value in DESIGN.items() if key != missing}
        with pytest.raises(TypeError, match=missing):
            verdict_claim("gap", "s", "c", {}, evidence, **fields)
    stored = claim.model_dump(mode="json")
    for missing in ("could_fail", "detectable", "n", "unit"):
        with pytest.raises(ValidationError, match=missing):
            Claim.model_validate({key: value for key, value in stored.items() if key != missing})


def test_exact_permutation_p_for_four_paired_units_by_hand():
    # 2^4 = 16 sign assignments of (1, 2, 3, 4): only all-positive reaches the observed mean 2.5
    assert permutation_p([1.0, 2.0, 3.0, 4.0], "greater") == pytest.approx(1 / 16)
    assert permutation_p([1.0, 2.0, 3.0, 4.0], "two-sided") == pytest.approx(2 / 16)
    # (1, −2, 3, 4): sum 6; a sign assignment's sum is 10 − 2·(flipped magnitudes), ≥ 6 when the flipped
    # magnitudes sum to ≤ 2: {}, {1}, {2}, so p = 3/16
    assert permutation_p([1.0, -2.0, 3.0, 4.0], "greater") == pytest.approx(3 / 16)
    assert smallest_permutation_p(4) == pytest.approx(0.125) and smallest_permutation_p(6) == pytest.approx(
        1 / 32
    )


@settings(max_examples=20, deadline=None, derandomize=True)
@given(st.lists(st.floats(-5, 5, allow_nan=False), min_size=2, max_size=9))
def test_exact_permutation_p_equals_scipys_exact_sign_flip_test(values):
    array = np.asarray(values)
    expected = stats.permutation_test(
        (array,), np.mean, permutation_type="samples", n_resamples=np.inf, alternative="greater"
    ).pvalue
    assert permutation_p(values, "greater") == pytest.approx(expected, abs=1e-9)


def test_permutation_interval_is_none_below_six_units_and_contains_the_mean_otherwise():
    assert permutation_interval([1.0, 2.0, 3.0, 4.0, 5.0]) is None  # 2/2^5 = 0.0625 ≥ 0.05
    values = [0.8, 1.1, 0.9, 1.4, 1.0, 1.2, 0.7, 1.3]
    lower, upper = permutation_interval(values)
    assert lower < np.mean(values) < upper
    # the edges are where the shifted test starts rejecting
    assert permutation_p(np.asarray(values) - (lower - 1e-6), "two-sided") <= 0.05
    assert permutation_p(np.asarray(values) - (lower + 1e-6), "two-sided") > 0.05
    evidence = compare_permutation("gap", dict(enumerate(values)), dict.fromkeys(range(8), 0.0), 0.0, "above")
    assert evidence.verdict == "holds" and evidence.detectable == pytest.approx((upper - lower) / 2)
    few = compare_permutation("gap", {0: 1.0, 1: 2.0}, {0: 0.0, 1: 0.0}, 0.0, "above", unit="items")
    assert (
        few.verdict == "inconclusive" and "smallest attainable p 0.5" in few.note and few.detectable is None
    )


@settings(max_examples=15, deadline=None, derandomize=True)
@given(st.integers(0, 1000), st.integers(5, 40))
def test_bootstrap_interval_matches_scipys_percentile_bootstrap_and_stays_in_range(seed, n):
    values = np.random.default_rng(seed).uniform(0, 1, n)
    lower, upper = bootstrap_interval(values.tolist(), resamples=20_000, seed=seed)
    reference = stats.bootstrap(
        (values,), np.mean, method="percentile", n_resamples=20_000, random_state=seed
    ).confidence_interval
    width = reference.high - reference.low
    assert lower == pytest.approx(reference.low, abs=0.08 * width + 1e-9)
    assert upper == pytest.approx(reference.high, abs=0.08 * width + 1e-9)
    assert values.min() <= lower <= upper <= values.max()


def test_paired_bootstrap_of_shares_never_leaves_the_unit_interval():
    first = {i: 1.0 for i in range(30)}
    second = {i: float(i % 2) for i in range(30)}
    evidence = compare_paired_bootstrap("share gap", first, second, 0.0, "above", unit="items")
    assert 0.0 <= evidence.interval[0] <= evidence.interval[1] <= 1.0 and evidence.verdict == "holds"
    ones = compare_bootstrap("share", dict.fromkeys(range(10), 1.0), 0.5, "above")
    assert ones.interval == (1.0, 1.0)


def test_log_ratio_interval_of_two_four_eight_by_hand():
    geometric, (lower, upper) = log_ratio_interval([2.0, 4.0, 8.0])
    half = 4.302652729749462 * math.log(2) / math.sqrt(3)  # sd of (ln2, ln4, ln8) is ln 2
    assert geometric == pytest.approx(4.0)
    assert (lower, upper) == pytest.approx((4 * math.exp(-half), 4 * math.exp(half)))
    assert lower > 0  # a ratio's interval never goes negative
    evidence = compare_ratio("speed-up", {0: 2.0, 1: 4.0, 2: 8.0}, 1.0, "above")
    assert evidence.mean == pytest.approx(4.0) and evidence.detectable == pytest.approx(half)
    assert evidence.verdict == "inconclusive"  # [0.71, 22.4] contains 1
    with pytest.raises(ValueError, match="positive"):
        log_ratio_interval([1.0, -2.0, 3.0])


def test_range_rule_one_unit_on_the_wrong_side():
    values = {"0": 0.3, "1": 0.25, "2": -0.1}
    assert compare_every("rise", values, 0.0, "above").verdict == "fails"
    within_noise = compare_every("rise", values, 0.0, "above", noise={"0": 0.0, "1": 0.0, "2": 0.2})
    assert within_noise.verdict == "inconclusive" and within_noise.detectable == 0.2
    clear = compare_every("rise", {"0": 0.3, "1": 0.25, "2": 0.1}, 0.0, "above")
    assert clear.verdict == "holds" and clear.interval == (0.1, 0.3)
    assert "every unit in [0.1, 0.3]" in decide([clear])[1]


@pytest.mark.parametrize("n", [1, 7, 50])
def test_wilson_interval_at_zero_and_all_successes(n):
    lower, upper = wilson_interval(0, n)
    z = stats.norm.ppf(0.975)
    assert lower == 0.0 and upper == pytest.approx(z**2 / (n + z**2))
    lower, upper = wilson_interval(n, n)
    assert upper == 1.0 and lower == pytest.approx(n / (n + z**2))
    expected = stats.binomtest(3, 10).proportion_ci(0.95, method="wilson")
    assert wilson_interval(3, 10) == pytest.approx((expected.low, expected.high))
    evidence = compare_proportion("share", {i: i < 9 for i in range(10)}, 0.5, "above")
    assert evidence.mean == pytest.approx(0.9) and 0 <= evidence.interval[0] <= evidence.interval[1] <= 1


def test_best_setting_is_tested_against_each_named_setting_on_a_grid_that_has_them():
    grid = {
        14: {"0": 0.50, "1": 0.52, "2": 0.51},
        16: {"0": 0.49, "1": 0.52, "2": 0.50},
        20: {"0": 0.30, "1": 0.31, "2": 0.29},
    }
    best, evidence = compare_best("depth", grid, named=[16, 20])
    assert best == "14" and [item.name for item in evidence] == ["depth: best 14 − 16", "depth: best 14 − 20"]
    assert [item.verdict for item in evidence] == ["inconclusive", "holds"]  # 14 vs 16 untested argmax
    with pytest.raises(DesignError, match="lacks the named setting"):
        compare_best("depth", grid, named=[18])


def test_a_bounded_quantity_keeps_its_t_interval_inside_its_range_and_few_units_refuse_the_bootstrap():
    shares = {"0": 0.014, "1": 0.025, "2": 0.123}
    plain = compare("share", shares, 0.2, "below")
    clipped = compare("share", shares, 0.2, "below", bounds=(0.0, 1.0))
    assert plain.interval[0] < 0 and clipped.interval == (0.0, plain.interval[1])
    assert "clipped to [0, 1]" in clipped.interval_kind and clipped.verdict == plain.verdict
    few = compare_bootstrap("share", shares, 0.2, "below")
    assert few.interval is None and "needs ≥ 5" in few.refused
    with pytest.raises(DesignError, match="claim 'bias': refused share: a percentile bootstrap over 3"):
        verdict_claim("bias", "s", "c", {}, [few], **DESIGN)
