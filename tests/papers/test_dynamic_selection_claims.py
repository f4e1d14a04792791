"""Dynamic selection's claims under the three-verdict rule, on small hand-made summaries (no pipeline runs)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from stages.papers.dynamic_selection.claims import baselines_claim, lossless_claim, noise_claim, synergy_claim
from stages.papers.dynamic_selection.evaluate import paired_with_full, summarise
from stages.papers.dynamic_selection.params import ClaimsParams
from stages.papers.dynamic_selection.timing import savings, summarise_times, time_claim, timing_table

NAMES = ClaimsParams(
    baselines=["random"], noise_baselines=["random"], ratio=0.5, noise_rate=0.2, tolerance=0.005,
    min_time_saving=0.4, ablations=[],
)  # fmt: skip
EPOCHS = {"full": [1.0] * 6, "density_consistency": [0.5] * 5 + [5.0], "random": [0.45] * 6}


def dynamic_summary(accuracy: dict[tuple[float, str], list[float]], epochs: dict[str, list[float]] = EPOCHS):
    """The evaluate step's summary and the timing step's table of hand-made runs (full at ratio 1, others 0.5)."""
    runs, timings = [], []
    for (noise, method), values in accuracy.items():
        ratio = 1.0 if method == "full" else 0.5
        for seed, value in enumerate(values):
            noisy = noise > 0 and method != "full"
            key = {"noise_rate": noise, "seed": seed, "method": method, "ratio": ratio}
            runs.append(
                key
                | {
                    "accuracy": value,
                    "n_suppressed": 100 if noisy else 0,
                    "suppression_precision": 0.6 + 0.01 * seed if noisy else None,
                    "suppression_recall": 0.3 if noisy else None,
                    "flipped_selection_rate": (0.2 if noisy else 0.5) if noise > 0 else None,
                    "clean_selection_rate": 0.55 if method != "full" else 1.0,
                }
            )
            per_epoch = epochs.get(method, [0.5] * 6)
            kept = 1000 if method == "full" else 500
            timings.append(
                key | {"scoring_seconds": [0.0] * len(per_epoch), "training_seconds": per_epoch,
                       "augment_seconds": [0.0] * len(per_epoch), "n_kept": [kept] * len(per_epoch),
                       "total_seconds": sum(per_epoch)}
            )  # fmt: skip
    frame = pl.DataFrame(runs, schema_overrides={"flipped_selection_rate": pl.Float64})
    times = summarise_times(savings(timing_table(timings, [0.0] * len(timings)), "full"))
    return summarise(paired_with_full(frame, "full")), times


def test_time_saving_uses_median_epoch_times_so_one_slow_epoch_cannot_flip_it():
    accuracy = {
        (0.0, "full"): [0.88, 0.89, 0.87],
        (0.0, "density_consistency"): [0.879, 0.8895, 0.8705],
        (0.0, "random"): [0.86, 0.87, 0.85],
    }
    summary, times = dynamic_summary(accuracy)
    row = times.filter(pl.col("method") == "density_consistency").row(0, named=True)
    assert row["time_saving_mean"] < 0  # total seconds 7.5 vs 6: one 5-second epoch
    assert row["time_saving_robust_per_seed"] == pytest.approx([0.5, 0.5, 0.5])
    assert time_claim(times, NAMES).verdict == "holds"
    claim = lossless_claim(summary, NAMES)
    assert claim.verdict == "holds", claim.reason
    assert claim.evidence[0].per_seed == pytest.approx({"0": -0.001, "1": -0.0005, "2": 0.0005})
    assert not any("seconds" in name or "time" in name for name in summary.columns)


def test_time_claim_fails_when_the_saving_is_below_the_target():
    accuracy = {(0.0, "full"): [0.88, 0.89, 0.87], (0.0, "density_consistency"): [0.88, 0.89, 0.87]}
    slow = {"full": [1.0] * 6, "density_consistency": [0.9, 0.8, 0.85, 0.9, 0.8, 0.85]}
    _, times = dynamic_summary(accuracy, slow)
    assert time_claim(times, NAMES).verdict == "fails"


def test_lossless_gap_straddling_the_tolerance_is_inconclusive():
    accuracy = {
        (0.0, "full"): [0.88, 0.89, 0.87],
        (0.0, "density_consistency"): [0.874, 0.889, 0.870],  # gaps −0.006, −0.001, 0.0
        (0.0, "random"): [0.86, 0.87, 0.85],
    }
    claim = lossless_claim(dynamic_summary(accuracy)[0], NAMES)
    assert claim.verdict == "inconclusive"
    assert [item.verdict for item in claim.evidence] == ["inconclusive"]


NOISY = {
    (0.0, "full"): [0.88, 0.89, 0.87],
    (0.0, "density_consistency"): [0.875, 0.885, 0.866],
    (0.0, "random"): [0.86, 0.87, 0.85],
    (0.2, "full"): [0.80, 0.82, 0.78],
    (0.2, "density_consistency"): [0.83, 0.85, 0.81],
    (0.2, "random"): [0.79, 0.80, 0.78],
}


def test_baselines_and_noise_claims_are_paired_per_seed():
    summary, _ = dynamic_summary(NOISY)
    beats = baselines_claim(summary, NAMES)
    assert beats.verdict == "holds", beats.reason
    noise = noise_claim(summary, NAMES)
    assert noise.verdict == "holds", noise.reason
    names = [item.name for item in noise.evidence]
    assert names[:2] == ["accuracy − full-data accuracy", "accuracy − random accuracy at ratio 0.5"]
    assert [item.verdict for item in noise.evidence] == ["holds"] * 4
    loses = dict(NOISY)
    loses[(0.0, "random")] = [0.875, 0.89, 0.864]  # random wins on seed 1, loses on 0 and 2
    assert baselines_claim(dynamic_summary(loses)[0], NAMES).verdict == "inconclusive"
    assert {claim.unit for claim in (beats, noise)} == {"seed"}


def test_noise_claim_fails_when_random_selection_beats_the_method_under_noise():
    # random selection (a regulariser against memorising flipped labels) wins on every seed at 20 % noise
    accuracy = dict(NOISY) | {(0.2, "random"): [0.84, 0.86, 0.82]}
    claim = noise_claim(dynamic_summary(accuracy)[0], NAMES)
    assert claim.verdict == "fails", claim.reason
    assert "random accuracy" in claim.reason


def test_suppression_precision_gets_an_interval_inside_0_1():
    summary, _ = dynamic_summary(NOISY)
    precise = summary.with_columns(
        pl.when(pl.col("noise_rate") == 0.2)
        .then(pl.lit([0.99, 1.0, 0.3]))  # a t interval over these would reach above 1
        .otherwise(pl.col("suppression_precision_per_seed"))
        .alias("suppression_precision_per_seed")
    )
    claim = noise_claim(precise, NAMES)
    precision, share = claim.evidence[2], claim.evidence[3]
    # its t interval is [−0.23, 1.8]: clipped to what a share can be
    assert precision.interval == (0.0, 1.0) and "clipped to [0, 1]" in precision.interval_kind
    assert precision.verdict == "inconclusive"
    assert "clipped to [-1, 1]" in share.interval_kind and share.verdict == "holds"


def synergy_runs(random_aug: list[float], method: list[float]) -> pl.DataFrame:
    """Noise-0 runs of the five labels the synergy claim reads (random 0.85 ± seed, the rest as given)."""
    base = np.array([0.85, 0.86, 0.84])
    accuracy = {
        (0.0, "full"): list(base + 0.02),
        (0.0, "random"): list(base),
        (0.0, "random_aug"): random_aug,
        (0.0, "random_aug_share"): list(base + 0.004),  # a random matched share adds 0.4 pt
        (0.0, "density_consistency_noaug"): list(base + 0.002),
        (0.0, "density_consistency"): method,
    }
    return dynamic_summary(accuracy)[0]


def test_synergy_is_inconclusive_by_design_when_the_augmentation_does_not_help_the_model():
    hurts = synergy_runs(random_aug=[0.83, 0.84, 0.82], method=[0.87, 0.88, 0.86])
    claim = synergy_claim(hurts, ClaimsParams())
    assert claim.verdict == "inconclusive" and "by design" in claim.reason
    assert claim.evidence[0].verdict == "fails"  # the gate is recorded with its own verdict
    assert [item.verdict for item in claim.evidence[1:]] == ["holds", "holds"]


def test_synergy_holds_when_routed_augmentation_adds_more_than_a_random_share_and_fails_otherwise():
    helps = [0.86, 0.872, 0.849]
    claim = synergy_claim(synergy_runs(helps, method=[0.862, 0.873, 0.851]), ClaimsParams())
    assert claim.verdict == "holds", claim.reason
    routed, interaction = claim.evidence[1], claim.evidence[2]
    assert routed.per_seed == pytest.approx({"0": 0.01, "1": 0.011, "2": 0.009})
    assert interaction.per_seed == pytest.approx({"0": 0.006, "1": 0.007, "2": 0.005})
    # the routed augmentation costs accuracy on every seed against the same selection without it
    worse = synergy_claim(synergy_runs(helps, method=[0.848, 0.857, 0.839]), ClaimsParams())
    assert worse.verdict == "fails", worse.reason


def timing_summary(savings: list[float], precompute: float = 0.0) -> pl.DataFrame:
    """A timing summary: the method's robust time saving per seed against the full-data run (1 s a run)."""
    rows = [
        {"noise_rate": 0.0, "method": method, "ratio": ratio, "seeds": len(savings), "seconds_mean": 1.0,
         "time_saving_mean": 0.0, "time_saving_robust_mean": float(np.mean(values)), "scoring_share_mean": 0.0,
         "augment_share_mean": 0.0, "precompute_seconds_mean": extra, "seed_list": list(range(len(savings))),
         "time_saving_robust_per_seed": values}
        for method, ratio, values, extra in [
            ("density_consistency", 0.5, savings, precompute), ("full", 1.0, [0.0] * len(savings), 0.0)
        ]
    ]  # fmt: skip
    return pl.DataFrame(rows)


def test_time_claim_judges_the_cost_ratio_on_the_log_scale():
    # costs 0.5, 0.48, 0.52 of full data: geometric mean 0.4995, its log interval wholly below 0.6
    claim = time_claim(timing_summary([0.5, 0.52, 0.48]), NAMES)
    (ratio,) = claim.evidence
    assert ratio.per_seed == pytest.approx({"0": 0.5, "1": 0.48, "2": 0.52})
    assert ratio.mean == pytest.approx((0.5 * 0.48 * 0.52) ** (1 / 3)) and "log-ratio" in ratio.interval_kind
    assert ratio.threshold == pytest.approx(0.6) and ratio.direction == "below"
    assert claim.verdict == "holds" and claim.unit == "seed" and claim.n == 3
    # one seed costs more than full data (saving −0.5): a ratio of 1.5, never a negative cost on the log scale
    spread = time_claim(timing_summary([0.5, 0.55, -0.5]), NAMES).evidence[0]
    assert spread.interval[0] > 0 and spread.verdict == "inconclusive"
    assert time_claim(timing_summary([-0.2, -0.1, -0.15]), NAMES).verdict == "fails"


def test_time_claim_is_inconclusive_by_design_when_the_precompute_alone_exceeds_the_budget():
    # the one-off precompute costs 0.7 of a full-data run: no per-epoch saving can reach a ratio of 0.6
    claim = time_claim(timing_summary([-0.2, -0.1, -0.15], precompute=0.7), NAMES)
    assert claim.verdict == "inconclusive" and "by design" in claim.reason
    assert claim.evidence[0].verdict == "fails"  # the measured ratio stays on record
    assert claim.measured["cost_ratio_without_precompute"] == pytest.approx(0.3)
    assert time_claim(timing_summary([-0.2, -0.1, -0.15], precompute=0.5), NAMES).verdict == "fails"
