"""Info-Coevolution's outputs explain themselves: sustained "reached", the tolerance beside the test noise, the
majority class, and why the paper's absolute stop rule did not fire on a low-confidence task."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from stages.core.params import read_params_file, validate_section
from stages.methods.selection.online.registry import make_strategy
from stages.methods.selection.online.strategy import PoolView
from stages.papers.info_coevolution.claims import stop_rule_claim
from stages.papers.info_coevolution.evaluate import run_summary, split_noise
from stages.papers.info_coevolution.params import InfoCoevolutionParams
from stages.papers.info_coevolution.stop_rule import stop_rule_note, stop_threshold
from tests.conftest import REPO_ROOT

POOL = 600


@pytest.fixture(scope="module")
def params() -> InfoCoevolutionParams:
    section = read_params_file(REPO_ROOT / "params.yaml")["info_coevolution"]
    return validate_section(InfoCoevolutionParams, section, "info_coevolution")


def curve(strategy: str, seed: int, accuracies: list[float], gains: list[float | None]) -> pl.DataFrame:
    rounds = len(accuracies)
    return pl.DataFrame(
        {
            "strategy": strategy, "seed": seed, "round": list(range(rounds)),
            "n_annotated": [50 + 50 * index for index in range(rounds)], "training": "supervised",
            "accuracy": accuracies, "remaining_gain": gains, "stopped": False,
        },
        schema_overrides={"seed": pl.Int64, "round": pl.Int64, "n_annotated": pl.Int64, "remaining_gain": pl.Float64},
    )  # fmt: skip


def test_reached_means_sustained_for_the_rest_of_the_run_not_a_first_crossing():
    curves = pl.concat(
        [
            curve("info_coevolution", 0, [0.80, 0.90, 0.85, 0.899, 0.91], [None, 60, 50, 45, 40]),
            curve("info_coevolution", 1, [0.80, 0.90, 0.91, 0.92, 0.85], [None, 60, 50, 45, 40]),
        ]
    )
    summary = run_summary(curves, {"mean": 0.9, "lower": 0.89, "upper": 0.91}, 0.005, POOL).sort("seed")
    assert summary["first_crossing"].to_list() == [100, 100]
    assert summary["annotations_to_full"].to_list() == [200, None]  # seed 1 falls back at its last round
    assert summary["annotations_to_full_lenient"].to_list() == [200, None]  # 0.85 < 0.89 − 0.005 at the end
    assert summary["annotations_to_full_strict"].to_list() == [250, None]
    assert summary["final_remaining_gain"].to_list() == [40.0, 40.0]


def test_tolerance_sits_beside_the_test_standard_error_and_the_majority_class():
    pool_labels = np.array([0] * 70 + [1] * 30)
    test_labels = np.array([0] * 819 + [1] * 455)
    test = split_noise(pool_labels, test_labels, full_accuracy=0.78)
    assert test.size == 1274
    assert test.standard_error == pytest.approx(np.sqrt(0.78 * 0.22 / 1274))  # ≈ 0.0116 > tolerance 0.005
    assert test.majority_accuracy == pytest.approx(819 / 1274)  # class 0 chosen on the pool, scored on test


def low_confidence_pool(n: int = POOL, classes: int = 4, seed: int = 0) -> tuple[PoolView, np.ndarray]:
    """A task the model is unsure of: near-uniform probabilities, and 64-d embeddings without class structure, so
    no neighbour lies within the vote radius to lend the dataset view confidence."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, n)
    probabilities = rng.dirichlet(np.full(classes, 50.0), n)  # max p ≈ 1/K + small: normalised confidence ≈ 0
    labelled = np.zeros(n, bool)
    labelled[:30] = True
    view = PoolView(rng.normal(size=(n, 64)), probabilities, labelled, np.where(labelled, labels, -1))
    return view, labels


def test_on_a_low_confidence_task_the_absolute_stop_rule_cannot_fire_and_the_output_says_why(params):
    view, labels = low_confidence_pool()
    strategy = make_strategy("info_coevolution", {"backend": "exact"})
    strategy.begin_round(view, np.random.default_rng(0))
    cap = 300
    while view.labelled.sum() < cap:
        assert not strategy.should_stop()
        rows = strategy.propose(50)
        strategy.observe(rows, labels[rows])
    gain = strategy.remaining_gain()
    assert gain > 100 * stop_threshold(params)  # hundreds left of at most 300: the rule is far from firing
    note = stop_rule_note(stop_threshold(params), POOL, cap, gain, fired=False)
    assert f"remaining gain was {gain:.3g}" in note and "× the threshold" in note
    assert "the paper's absolute rule: total remaining gain ≤ 1" in note and "per unlabelled row" in note


REFERENCE = {"0": 0.78, "1": 0.781, "2": 0.779}


def test_stop_claim_explains_a_silent_rule_with_the_remaining_gain(params):
    rows = [
        {"strategy": "info_coevolution", "seed": seed, "full_accuracy": 0.78, "annotations_to_full": None,
         "stopped_at": None, "accuracy_at_stop": None, "final_annotations": 637, "final_accuracy": 0.75,
         "final_remaining_gain": gain, "pool_size": 1274, "test_size": 1274, "test_standard_error": 0.0116}
        for seed, gain in enumerate([36.2, 51.9])
    ]  # fmt: skip
    summary = pl.DataFrame(rows, schema_overrides={"annotations_to_full": pl.Int64, "stopped_at": pl.Int64})
    censored = stop_rule_claim(summary, params.model_copy(update={"budget": 0.5}), 1274, REFERENCE)
    # a cap (50 % of the pool) below the paper's stop point: censored, so undecidable by design
    assert censored.verdict == "inconclusive" and censored.reason.startswith(
        "Inconclusive by design (censored)"
    )
    assert "remaining gain 36.2–51.9 when the run ended" in censored.reason
    claim = stop_rule_claim(summary, params, 1274, REFERENCE)  # the default cap: the whole pool
    assert params.budget == 1.0
    assert claim.verdict == "fails" and "remaining gain 36.2–51.9 when the run ended" in claim.reason
    assert "36.2× the threshold (0.057 per unlabelled row)" in claim.measured["per_seed"]["0"]["stop_rule"]
    assert claim.measured["stop_gain"] == 1.0 and claim.measured["stop_gain_share_of_pool_gain"] == 1 / 1274
    assert (
        claim.measured["tolerance_below_standard_error"] and claim.measured["test_standard_error"] == 0.0116
    )


def stopped_runs(stops: list[int | None], accuracies: list[float]) -> pl.DataFrame:
    rows = [
        {"strategy": "info_coevolution", "seed": seed, "full_accuracy": 0.78, "annotations_to_full": None,
         "stopped_at": stop, "accuracy_at_stop": None if stop is None else accuracy,
         "final_annotations": stop or 1500, "final_accuracy": accuracy, "final_remaining_gain": 0.5 if stop else 9.0,
         "pool_size": 1500, "test_size": 1000, "test_standard_error": 0.013}
        for seed, (stop, accuracy) in enumerate(zip(stops, accuracies, strict=True))
    ]  # fmt: skip
    return pl.DataFrame(rows, schema_overrides={"annotations_to_full": pl.Int64, "stopped_at": pl.Int64})


def test_the_stop_rule_must_fire_on_every_seed_and_the_gap_is_paired_with_each_seeds_reference(params):
    near = stop_rule_claim(stopped_runs([975, 1050, 975], [0.782, 0.783, 0.781]), params, 1500, REFERENCE)
    fired, gap = near.evidence
    assert fired.verdict == "holds" and fired.interval == (1.0, 1.0)  # observed range: every seed fired
    assert gap.per_seed == pytest.approx({"0": -0.002, "1": -0.002, "2": -0.002})  # paired by seed
    assert "paired" in gap.interval_kind and gap.verdict == "holds" and near.verdict == "holds"
    low = stop_rule_claim(stopped_runs([975, 1050, 975], [0.74, 0.75, 0.745]), params, 1500, REFERENCE)
    assert low.evidence[1].verdict == "fails" and low.verdict == "fails"  # stopped clearly below full labels
    silent = stop_rule_claim(stopped_runs([975, None, 975], [0.782, 0.78, 0.781]), params, 1500, REFERENCE)
    assert silent.evidence[0].verdict == "fails" and silent.verdict == "fails"  # one silent seed fails it
    assert silent.evidence[1].verdict == "inconclusive" and "never fired on seed 1" in silent.evidence[1].note
    unpaired = stop_rule_claim(
        stopped_runs([975, 1050, 975], [0.782, 0.783, 0.781]),
        params,
        1500,
        {"7": 0.78, "8": 0.78, "9": 0.781},
    )
    assert unpaired.evidence[1].interval_kind.startswith(
        "Welch"
    )  # reference seeds that do not cover the runs
