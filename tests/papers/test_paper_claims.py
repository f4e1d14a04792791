"""The papers' claims under the three-verdict rule, on small hand-made inputs (no pipeline runs)."""

from __future__ import annotations

import polars as pl
import pytest

from stages.core.claims import DesignError
from stages.core.params import read_params_file, validate_section
from stages.papers.info_coevolution.claims import (
    difference,
    fewer_annotations_claim,
    semi_supervised_claim,
    stop_rule_claim,
)
from stages.papers.info_coevolution.params import InfoCoevolutionParams

# ------------------------------------------------------------------------------------------ Info-Coevolution

POOL = 20000


@pytest.fixture
def ic_default(repo_root) -> InfoCoevolutionParams:
    section = read_params_file(repo_root / "params.yaml")["info_coevolution"]
    return validate_section(InfoCoevolutionParams, section, "info_coevolution")


@pytest.fixture
def ic_params(ic_default) -> InfoCoevolutionParams:
    """A cap of 80 % of the pool, above the paper's operating point, so the claims can be decided."""
    return ic_default.model_copy(update={"budget": 0.8})


def ic_summary(needed: dict[str, list[int | None]], stops: list[int | None] | None = None, gap=0.002):
    """A summary table: per strategy and seed, annotations to full (None: never reached within 10,000)."""
    rows = []
    for strategy, counts in needed.items():
        for seed, count in enumerate(counts):
            stopped = stops[seed] if stops is not None and strategy == "info_coevolution" else None
            rows.append(
                {
                    "strategy": strategy,
                    "seed": seed,
                    "full_accuracy": 0.88,
                    "annotations_to_full": count,
                    "stopped_at": stopped,
                    "accuracy_at_stop": None if stopped is None else 0.88 - gap * (1 + 0.1 * (seed % 2)),
                    "final_annotations": 10000 if stopped is None else stopped,
                    "final_accuracy": 0.88,
                    "final_remaining_gain": 40.0 if stopped is None else 0.9,
                    "pool_size": POOL,
                    "test_size": 1274,
                    "test_standard_error": 0.0091,
                }
            )
    return pl.DataFrame(rows, schema_overrides={"annotations_to_full": pl.Int64, "stopped_at": pl.Int64})


def test_censored_differences_keep_only_what_is_known():
    assert difference((10.0, "exact"), (4.0, "exact")) == (6.0, "exact")
    assert difference((10.0, "lower"), (4.0, "exact")) == (6.0, "lower")  # a ≥ 10 → a − 4 ≥ 6
    assert difference((10.0, "exact"), (4.0, "lower")) == (6.0, "upper")  # b ≥ 4 → 10 − b ≤ 6
    assert difference((10.0, "lower"), (4.0, "lower")) == (None, "exact")


def test_semi_supervised_difference_inside_the_noise_is_inconclusive_not_failing(ic_params):
    # the old rule compared means (semi 5567 > supervised 5500) and reported "fails"
    summary = ic_summary(
        {
            "info_coevolution": [5000, 5500, 6000],
            "info_coevolution_semi": [5200, 5400, 6100],
            "random": [9000, 9500, 9800],
            "least_confidence": [8000, 8200, 8100],
        }
    )
    claim = semi_supervised_claim(summary, ic_params)
    assert claim.verdict == "inconclusive"
    assert claim.evidence[0].per_seed == {"0": -200.0, "1": 100.0, "2": -100.0}
    clearly = ic_summary(
        {"info_coevolution": [5000, 5500, 6000], "info_coevolution_semi": [4000, 4400, 5100]}
    )
    assert semi_supervised_claim(clearly, ic_params).verdict == "holds"
    worse = ic_summary({"info_coevolution": [5000, 5500, 6000], "info_coevolution_semi": [6000, 6600, 7100]})
    assert semi_supervised_claim(worse, ic_params).verdict == "fails"


def test_fewer_annotations_counts_a_baseline_that_never_reached_as_a_bound(ic_params):
    summary = ic_summary(
        {
            "info_coevolution": [5000, 5200, 5100],
            "info_coevolution_semi": [4000, 4100, 4200],
            "random": [None, None, 9900],
            "least_confidence": [8000, 8200, 8100],
        }
    )
    claim = fewer_annotations_claim(summary, ic_params, POOL)
    assert claim.verdict == "holds", claim.reason
    saving, versus_random, _ = claim.evidence
    assert saving.mean == pytest.approx(1 - 5100 / POOL) and saving.interval[0] > ic_params.claims.min_saving
    assert "clipped to [0, 1]" in saving.interval_kind and saving.interval[1] <= 1  # a share
    assert (
        versus_random.per_seed == {"0": 5000.0, "1": 4800.0, "2": 4800.0} and "censored" in versus_random.note
    )


def test_fewer_annotations_is_inconclusive_when_ours_never_reached_on_a_seed(ic_params):
    summary = ic_summary(
        {
            "info_coevolution": [5000, None, 5100],
            "info_coevolution_semi": [4000, 4100, 4200],
            "random": [9000, 9500, 9800],
            "least_confidence": [8000, 8200, 8100],
        }
    )
    claim = fewer_annotations_claim(summary, ic_params, POOL)
    assert claim.verdict == "inconclusive"
    assert claim.evidence[0].verdict == "inconclusive" and "rests on bounds" in claim.reason


def test_stop_rule_fails_when_a_seed_never_stops_and_holds_when_all_stop_close(ic_params):
    needed = {"info_coevolution": [5000, 5200, 5100], "info_coevolution_semi": [4000, 4100, 4200]}
    reference = [0.8795, 0.8800, 0.8805]  # the full-label runs the gap is judged against
    close = stop_rule_claim(
        ic_summary(needed, stops=[7000, 7500, 7200], gap=0.001), ic_params, POOL, reference
    )
    assert close.verdict == "holds", close.reason
    silent = stop_rule_claim(
        ic_summary(needed, stops=[7000, None, 7200], gap=0.001), ic_params, POOL, reference
    )
    assert silent.verdict == "fails" and "did not fire on seed 1" in silent.reason
    far = stop_rule_claim(ic_summary(needed, stops=[7000, 7500, 7200], gap=0.02), ic_params, POOL, reference)
    assert far.verdict == "fails"


def test_a_cap_below_the_papers_operating_point_makes_annotations_and_stop_inconclusive_by_design(ic_default):
    """A cap of 50 % of the pool (the old default) ends every run that behaves as the paper's (65–72 %) before it
    reaches full-label accuracy or its stop rule fires: censored, so undecidable; what was measured stays in the
    reason."""
    ic_default = ic_default.model_copy(update={"budget": 0.5})
    needed = {"info_coevolution": [5000, 5200, 5100], "info_coevolution_semi": [4000, 4100, 4200],
              "random": [None, None, 9900], "least_confidence": [8000, 8200, 8100]}  # fmt: skip
    fewer = fewer_annotations_claim(ic_summary(needed), ic_default, POOL)
    assert fewer.verdict == "inconclusive" and fewer.reason.startswith("Inconclusive by design (censored)")
    assert "Measured: All 3 compared quantities clear" in fewer.reason
    assert "Cannot fail by construction" in fewer.could_fail
    silent = stop_rule_claim(ic_summary(needed, stops=[7000, None, 7200]), ic_default, POOL, [0.88] * 3)
    assert silent.verdict == "inconclusive" and "did not fire on seed 1" in silent.reason
    assert silent.unit == "seed" and "below the paper's operating point" in silent.reason
    semi = semi_supervised_claim(ic_summary(needed), ic_default)
    assert semi.verdict == "holds"  # not censored by design: judged as measured


def test_censoring_that_leaves_too_few_known_seeds_is_inconclusive_but_two_seeds_are_refused(ic_params):
    both_capped = {"info_coevolution": [None, None, 5100], "info_coevolution_semi": [None, None, 4200],
                   "random": [9000, 9500, 9800], "least_confidence": [8000, 8200, 8100]}  # fmt: skip
    claim = semi_supervised_claim(ic_summary(both_capped), ic_params)  # seeds 0, 1: lower − lower is unknown
    assert claim.verdict == "inconclusive" and "only 1 of 3 units known" in claim.evidence[0].note
    two = {name: counts[:2] for name, counts in both_capped.items()}
    with pytest.raises(DesignError, match="claim 'semi_supervised_saves_more'"):
        semi_supervised_claim(ic_summary({name: [4000, 4100] for name in two}), ic_params)


# dynamic selection: tests/papers/test_dynamic_selection_claims.py
