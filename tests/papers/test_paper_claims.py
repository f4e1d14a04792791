"""The papers' claims under the three-verdict rule, on small hand-made inputs (no pipeline runs)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from stages.core.claims import DesignError
from stages.core.params import read_params_file, validate_section
from stages.methods.graphs.separability import SeparabilityConfig, compare_modes
from stages.papers.dynamic_selection.claims import baselines_claim, lossless_claim, noise_claim
from stages.papers.dynamic_selection.evaluate import paired_with_full, summarise
from stages.papers.dynamic_selection.params import ClaimsParams as DynamicClaims
from stages.papers.dynamic_selection.timing import savings, summarise_times, time_claim, timing_table
from stages.papers.info_coevolution.claims import (
    difference,
    fewer_annotations_claim,
    semi_supervised_claim,
    stop_rule_claim,
)
from stages.papers.info_coevolution.params import InfoCoevolutionParams
from stages.papers.rings.claims import complementarity_claim, controls_claim, ranking_claim
from stages.papers.rings.params import ClaimsParams as RingsClaims

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
    """The default cap (50 % of the pool) ends every run that behaves as the paper's (65–72 %) before it reaches
    full-label accuracy or its stop rule fires: censored, so undecidable; what was measured stays in the reason."""
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


# ---------------------------------------------------------------------------------------- dynamic selection

NAMES = DynamicClaims(
    baselines=["random"], ratio=0.5, noise_rate=0.2, tolerance=0.005, min_time_saving=0.4, ablations=[]
)


def _dynamic_summary(accuracy: dict[tuple[float, str], list[float]], epochs: dict[str, list[float]]):
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
            per_epoch = epochs[method]
            kept = 1000 if method == "full" else 500
            timings.append(
                key | {"scoring_seconds": [0.0] * len(per_epoch), "training_seconds": per_epoch,
                       "augment_seconds": [0.0] * len(per_epoch), "n_kept": [kept] * len(per_epoch),
                       "total_seconds": sum(per_epoch)}
            )  # fmt: skip
    frame = pl.DataFrame(runs, schema_overrides={"flipped_selection_rate": pl.Float64})
    times = summarise_times(savings(timing_table(timings, [0.0] * len(timings)), "full"))
    return summarise(paired_with_full(frame, "full")), times


EPOCHS = {"full": [1.0] * 6, "density_consistency": [0.5] * 5 + [5.0], "random": [0.45] * 6}


def test_time_saving_uses_median_epoch_times_so_one_slow_epoch_cannot_flip_it():
    accuracy = {
        (0.0, "full"): [0.88, 0.89, 0.87],
        (0.0, "density_consistency"): [0.879, 0.8895, 0.8705],
        (0.0, "random"): [0.86, 0.87, 0.85],
    }
    summary, times = _dynamic_summary(accuracy, EPOCHS)
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
    _, times = _dynamic_summary(accuracy, slow)
    assert time_claim(times, NAMES).verdict == "fails"


def test_lossless_gap_straddling_the_tolerance_is_inconclusive():
    accuracy = {
        (0.0, "full"): [0.88, 0.89, 0.87],
        (0.0, "density_consistency"): [0.874, 0.889, 0.870],  # gaps −0.006, −0.001, 0.0
        (0.0, "random"): [0.86, 0.87, 0.85],
    }
    claim = lossless_claim(_dynamic_summary(accuracy, EPOCHS)[0], NAMES)
    assert claim.verdict == "inconclusive"
    assert [item.verdict for item in claim.evidence] == ["inconclusive"]


def test_baselines_and_noise_claims_are_paired_per_seed():
    accuracy = {
        (0.0, "full"): [0.88, 0.89, 0.87],
        (0.0, "density_consistency"): [0.875, 0.885, 0.866],
        (0.0, "random"): [0.86, 0.87, 0.85],
        (0.2, "full"): [0.80, 0.82, 0.78],
        (0.2, "density_consistency"): [0.83, 0.85, 0.81],
        (0.2, "random"): [0.79, 0.80, 0.78],
    }
    summary, _ = _dynamic_summary(accuracy, EPOCHS)
    beats = baselines_claim(summary, NAMES)
    assert beats.verdict == "holds", beats.reason
    noise = noise_claim(summary, NAMES)
    assert noise.verdict == "holds", noise.reason
    assert [item.verdict for item in noise.evidence] == ["holds", "holds", "holds"]
    loses = dict(accuracy)
    loses[(0.0, "random")] = [0.875, 0.89, 0.864]  # random wins on seed 1, loses on 0 and 2
    assert baselines_claim(_dynamic_summary(loses, EPOCHS)[0], NAMES).verdict == "inconclusive"
    assert {claim.unit for claim in (beats, noise)} == {"seed"} and "synergy" in beats.could_fail


def _times(savings: list[float]) -> pl.DataFrame:
    """A timing summary: the method's robust time saving per seed against the full-data run."""
    rows = [
        {"noise_rate": 0.0, "method": method, "ratio": ratio, "seeds": len(savings), "seconds_mean": 1.0,
         "time_saving_mean": 0.0, "time_saving_robust_mean": float(np.mean(values)), "scoring_share_mean": 0.0,
         "augment_share_mean": 0.0, "precompute_seconds_mean": 0.0, "seed_list": list(range(len(savings))),
         "time_saving_robust_per_seed": values}
        for method, ratio, values in [("density_consistency", 0.5, savings), ("full", 1.0, [0.0] * len(savings))]
    ]  # fmt: skip
    return pl.DataFrame(rows)


def test_time_claim_judges_the_cost_ratio_on_the_log_scale():
    # costs 0.5, 0.48, 0.52 of full data: geometric mean 0.4995, its log interval wholly below 0.6
    claim = time_claim(_times([0.5, 0.52, 0.48]), NAMES)
    (ratio,) = claim.evidence
    assert ratio.per_seed == pytest.approx({"0": 0.5, "1": 0.48, "2": 0.52})
    assert ratio.mean == pytest.approx((0.5 * 0.48 * 0.52) ** (1 / 3)) and "log-ratio" in ratio.interval_kind
    assert ratio.threshold == pytest.approx(0.6) and ratio.direction == "below"
    assert claim.verdict == "holds" and claim.unit == "seed" and claim.n == 3
    # one seed costs more than full data (saving −0.5): a ratio of 1.5, never a negative cost on the log scale
    spread = time_claim(_times([0.5, 0.55, -0.5]), NAMES).evidence[0]
    assert spread.interval[0] > 0 and spread.verdict == "inconclusive"
    assert time_claim(_times([-0.2, -0.1, -0.15]), NAMES).verdict == "fails"


def test_suppression_precision_gets_an_interval_inside_0_1():
    accuracy = {
        (0.2, "full"): [0.80, 0.82, 0.78],
        (0.2, "density_consistency"): [0.83, 0.85, 0.81],
        (0.0, "full"): [0.88, 0.89, 0.87],
        (0.0, "density_consistency"): [0.875, 0.885, 0.866],
    }
    summary, _ = _dynamic_summary(accuracy, EPOCHS)
    precise = summary.with_columns(
        pl.when(pl.col("noise_rate") == 0.2)
        .then(pl.lit([0.99, 1.0, 0.3]))  # a t interval over these would reach above 1
        .otherwise(pl.col("suppression_precision_per_seed"))
        .alias("suppression_precision_per_seed")
    )
    claim = noise_claim(precise, NAMES)
    precision, share = claim.evidence[1], claim.evidence[2]
    # its t interval is [−0.23, 1.8]: clipped to what a share can be
    assert precision.interval == (0.0, 1.0) and "clipped to [0, 1]" in precision.interval_kind
    assert precision.verdict == "inconclusive"
    assert "clipped to [-1, 1]" in share.interval_kind and share.verdict == "holds"


# --------------------------------------------------------------------------------------------------- RINGS

RINGS_NAMES = RingsClaims(structure_control="structure_control", feature_control="feature_control")


def _separability(means: dict[str, dict[str, float]], seeds: int) -> pl.DataFrame:
    rng = np.random.default_rng(0)
    frames = []
    for dataset, modes in means.items():
        scores = pl.DataFrame(
            [
                {"mode": mode, "seed": seed, "score": mean + 0.01 * rng.standard_normal()}
                for mode, mean in modes.items()
                for seed in range(seeds)
            ]
        )
        tests = compare_modes(scores, SeparabilityConfig(permutations=5000, alpha=0.01), seed=0)
        frames.append(tests.select(pl.lit(dataset).alias("dataset"), pl.lit("gnn").alias("model"), pl.all()))
    return pl.concat(frames)


CONTROLS = {
    "structure_control": {"original": 0.9, "empty_graph": 0.5, "empty_features": 0.9},
    "feature_control": {"original": 0.9, "empty_graph": 0.9, "empty_features": 0.5},
}


def test_controls_hold_with_enough_seeds_and_are_inconclusive_when_the_design_cannot_reject():
    claim = controls_claim(_separability(CONTROLS, seeds=12), RINGS_NAMES)
    assert claim.verdict == "holds", claim.reason
    assert claim.unit == "seed" and claim.n == 12
    few = controls_claim(_separability(CONTROLS, seeds=5), RINGS_NAMES)  # Wilcoxon floor 2⁻⁴·2 > 0.01
    assert few.verdict == "inconclusive"
    assert (
        "cannot decide" in few.reason
        and few.measured["structure_control"]["empty_graph"]["decidable"] is False
    )


def test_identical_scores_settle_not_separable_although_the_wilcoxon_floor_is_one():
    # constant node features: removing them changes nothing, every seed scores the same (all differences 0)
    separability = _separability(CONTROLS, seeds=12)
    same = separability.filter(
        (pl.col("dataset") == "structure_control") & (pl.col("mode_b") == "empty_features")
    ).with_columns(
        pl.lit(0.0).alias("statistic"), pl.lit(1.0).alias("p_adjusted"), pl.lit(False).alias("significant"),
        pl.lit(1.0).alias("smallest_possible_p_adjusted"),
    )  # fmt: skip
    rest = separability.filter(
        ~((pl.col("dataset") == "structure_control") & (pl.col("mode_b") == "empty_features"))
    )
    claim = controls_claim(pl.concat([rest, same]), RINGS_NAMES)
    assert claim.verdict == "holds", claim.reason
    assert "identical score distributions" in claim.evidence[1].note
    shifted = same.with_columns(pl.lit(0.2).alias("statistic"))  # same floor, but the scores differ
    assert controls_claim(pl.concat([rest, shifted]), RINGS_NAMES).verdict == "inconclusive"


def test_controls_fail_when_the_wrong_mode_separates():
    swapped = {
        "structure_control": CONTROLS["feature_control"],
        "feature_control": CONTROLS["structure_control"],
    }
    claim = controls_claim(_separability(swapped, seeds=12), RINGS_NAMES)
    assert claim.verdict == "fails"
    assert [item.verdict for item in claim.evidence] == ["fails"] * 4


def test_ranking_mismatch_fails_on_a_decisive_design_and_is_inconclusive_otherwise():
    verdicts = pl.DataFrame(
        {
            "rank": [1, 2],
            "dataset": ["structure_control", "feature_control"],
            "category": ["structure", "neither"],
            "gnn_gain_over_baseline": [0.1, 0.0],
        }
    )
    assert ranking_claim(verdicts, _separability(CONTROLS, seeds=12), RINGS_NAMES).verdict == "fails"
    assert ranking_claim(verdicts, _separability(CONTROLS, seeds=5), RINGS_NAMES).verdict == "inconclusive"
    right = verdicts.with_columns(pl.Series("category", ["structure", "features"]))
    claim = ranking_claim(right, _separability(CONTROLS, seeds=5), RINGS_NAMES)
    assert claim.verdict == "holds" and claim.unit == "dataset" and claim.n == 2


def test_complementarity_uses_a_welch_interval_over_graphs():
    def table(geometric: float, spread: float, graphs: int) -> pl.DataFrame:
        return pl.DataFrame(
            [
                {"dataset": "d", "mode": "original", "graphs": graphs, "mean": 0.5, "std": spread, "median": 0.5},
                {"dataset": "d", "mode": "random_features", "graphs": graphs, "mean": 0.5, "std": spread,
                 "median": 0.5},
                {"dataset": "d", "mode": "geometric_features", "graphs": graphs, "mean": geometric, "std": spread,
                 "median": geometric},
            ]
        )  # fmt: skip

    def judged(geometric: float, spread: float, graphs: int):
        return complementarity_claim(table(geometric, spread, graphs), metric="resistance")

    assert judged(0.4, 0.05, 300).verdict == "holds"
    assert judged(0.499, 0.2, 30).verdict == "inconclusive"
    claim = judged(0.6, 0.05, 300)
    assert claim.verdict == "fails" and claim.measured["geometric_lower"] == {"d": False}
    assert claim.evidence[0].interval_kind == "Welch t 95% over graphs"
    assert claim.unit == "graph" and claim.n == 300 and claim.detectable[claim.evidence[0].name] > 0


def test_complementarity_with_hop_distances_is_inconclusive_by_design():
    # geometric features are an MDS of hop distances: with D_G the hop distance they are close to D_G by
    # construction, so even a clear difference decides nothing
    table = pl.DataFrame(
        [
            {"dataset": "d", "mode": mode, "graphs": 300, "mean": mean, "std": 0.05, "median": mean}
            for mode, mean in (("original", 0.5), ("random_features", 0.5), ("geometric_features", 0.1))
        ]
    )
    claim = complementarity_claim(table)
    assert claim.verdict == "inconclusive" and claim.evidence[0].verdict == "holds"
    assert claim.reason.startswith("Inconclusive by design") and "hop distance" in claim.could_fail
