"""RINGS claims under the three-verdict rule, on small hand-made inputs (no pipeline runs)."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.methods.graphs.separability import SeparabilityConfig, compare_modes
from stages.papers.rings.claims import complementarity_claim, controls_claim, ranking_claim
from stages.papers.rings.params import ClaimsParams as RingsClaims

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


def _complementarity(
    shift: dict[str, float], metrics=("shortest_path", "rings_heat"), graphs: int = 300, spread: float = 0.05
) -> pl.DataFrame:
    """A complementarity table with per-graph values: random features around 0.5, each geometry mode shifted by
    `shift[mode]` (the same per-graph noise on every row, so the paired differences are exactly the shift)."""
    noise = np.random.default_rng(0).normal(0.0, spread, graphs)
    rows = []
    for metric in metrics:
        for mode, offset in {"original": 0.0, "random_features": 0.0, **shift}.items():
            values = (
                0.5 + offset + noise + (0.01 * np.random.default_rng(1).normal(size=graphs) if offset else 0)
            )
            rows.append(
                {"dataset": "d", "metric": metric, "mode": mode, "graphs": graphs, "mean": float(values.mean()),
                 "std": float(values.std()), "median": float(np.median(values)), "values": values.tolist()}
            )  # fmt: skip
    return pl.DataFrame(rows)


def test_complementarity_judges_only_pairings_not_built_from_their_d_g():
    claim = complementarity_claim(_complementarity({"geometric_features": -0.1, "spectral_features": -0.05}))
    assert claim.verdict == "holds", claim.reason
    # the MDS of hops against hops holds by construction: recorded, not judged; eigenmaps embed no D_G
    assert [item.name for item in claim.evidence] == [
        "d, D_G shortest_path: spectral_features − random_features",
        "d, D_G rings_heat: spectral_features − random_features",
        "d, D_G rings_heat: geometric_features − random_features",
    ]
    assert set(claim.measured["by_construction"]) == {
        "d, D_G shortest_path: geometric_features − random_features"
    }
    assert claim.unit == "graph" and claim.n == 300
    assert claim.evidence[0].interval_kind == "paired t 95% over graphs"
    assert all(0 < value < 0.01 for value in claim.detectable.values())


def test_complementarity_fails_when_geometry_features_disagree_more_than_random_ones():
    claim = complementarity_claim(_complementarity({"geometric_features": 0.1, "spectral_features": -0.1}))
    assert claim.verdict == "fails"
    failing = [item.name for item in claim.evidence if item.verdict == "fails"]
    assert failing == ["d, D_G rings_heat: geometric_features − random_features"]


def test_complementarity_inside_the_noise_is_inconclusive():
    claim = complementarity_claim(
        _complementarity({"spectral_features": 0.0005}, metrics=("shortest_path",), graphs=30, spread=0.2)
    )
    assert claim.verdict == "inconclusive" and claim.reason.startswith("It is undecided")


def test_complementarity_with_only_self_derived_pairings_is_inconclusive_by_design():
    # geometric features are an MDS of hop distances: with D_G the hop distance they are close to D_G by
    # construction, so even a clear difference decides nothing
    claim = complementarity_claim(_complementarity({"geometric_features": -0.4}, metrics=("shortest_path",)))
    assert claim.verdict == "inconclusive" and claim.reason.startswith("Inconclusive by design")
    assert claim.evidence[0].verdict == "holds" and claim.measured["judged_pairings"] == []
