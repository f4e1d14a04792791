"""BRONet paper: params validation, the run grid, and the claims logic on synthetic results."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from pydantic import ValidationError

from stages.papers.bronet.claims import la_claim, per_item, rank_claim, soundness_claim
from stages.papers.bronet.params import BRONetParams
from stages.papers.bronet.train import run_specs


def test_params_refuse_bad_values_naming_the_key() -> None:
    with pytest.raises(ValidationError, match="width"):
        BRONetParams.model_validate({"default": {"width": 3}})
    with pytest.raises(ValidationError, match="named"):
        BRONetParams.model_validate({"default": {"rank_sweep": {"ranks": [0.25], "named": 0.5}}})
    with pytest.raises(ValidationError, match="convs"):
        BRONetParams.model_validate({"default": {"convs": ["bro", "bro"]}})


def test_run_grid_covers_convs_losses_seeds_and_ranks() -> None:
    params = BRONetParams()
    specs = run_specs(params)
    grid = [spec for spec in specs if spec.track == "grid"]
    ranks = [spec for spec in specs if spec.track == "rank"]
    assert len(grid) == 3 * 2 * len(params.grid.seeds)
    assert {spec.rank for spec in ranks} == {0.125, 0.25, 0.5} and {spec.blocks for spec in ranks} == {2}
    assert len({spec.label for spec in specs}) == len(specs)


def synthetic(
    correct_la: np.ndarray, correct_ce: np.ndarray, radius: float = 0.5
) -> tuple[pl.DataFrame, pl.DataFrame]:
    runs = pl.DataFrame(
        {
            "track": ["grid", "grid"],
            "conv": ["bro", "bro"],
            "loss": ["la", "ce_cr"],
            "rank": [0.125, 0.125],
            "seed": [0, 0],
            "label": ["la", "ce"],
            "attacked": [5, 5],
            "flipped": [0, 0],
            "flipped_beyond": [3, 0],
            **{column: [0.5, 0.5] for column in ("clean", "cert_36", "cert_72", "cert_108", "acr")},
        }
    )
    n = len(correct_la)
    items = pl.DataFrame(
        {
            "label": ["la"] * n + ["ce"] * n,
            "item": list(range(n)) * 2,
            "correct": np.concatenate([correct_la, correct_ce]),
            "radius": [radius] * (2 * n),
            "label_radius": [radius] * (2 * n),
        }
    )
    return runs, items


def test_per_item_averages_the_matching_runs() -> None:
    runs, items = synthetic(np.array([True, False, True]), np.array([False, False, True]), radius=0.1)
    assert per_item(items, runs, "correct", loss="la") == {"0": 1.0, "1": 0.0, "2": 1.0}
    assert per_item(items, runs, "cert36", loss="la") == {"0": 0.0, "1": 0.0, "2": 0.0}  # 0.1 < 36/255


def test_la_claim_holds_fails_and_is_inconclusive_by_the_evidence() -> None:
    rng = np.random.default_rng(0)
    base = rng.random(400) < 0.7
    params = BRONetParams()
    better = base | (rng.random(400) < 0.2)
    runs, items = synthetic(better, base)
    assert la_claim(items, runs, params).verdict == "holds"
    worse = base & (rng.random(400) < 0.8)
    runs, items = synthetic(worse, base)
    assert la_claim(items, runs, params).verdict == "fails"
    runs, items = synthetic(base, base)
    assert la_claim(items, runs, params).verdict in {"holds", "inconclusive"}


def test_soundness_fails_when_a_certified_point_flips() -> None:
    runs, _ = synthetic(np.array([True]), np.array([True]))
    params = BRONetParams()
    assert soundness_claim(runs, params).verdict == "holds"
    assert soundness_claim(runs.with_columns(pl.Series("flipped", [0, 1])), params).verdict == "fails"


def test_soundness_is_inconclusive_when_the_attack_flips_nothing_even_far_outside_the_radius() -> None:
    runs, _ = synthetic(np.array([True]), np.array([True]))
    powerless = runs.with_columns(pl.Series("flipped_beyond", [0, 0]))
    claim = soundness_claim(powerless, BRONetParams())
    assert claim.verdict == "inconclusive" and "could not have said no" in claim.reason
    assert (
        soundness_claim(powerless.with_columns(pl.Series("flipped", [0, 1])), BRONetParams()).verdict
        == "fails"
    )


def test_rank_claim_compares_the_best_rank_with_the_named_one() -> None:
    params = BRONetParams()
    rng = np.random.default_rng(1)
    ranks = params.grid.rank_sweep.ranks
    runs = pl.DataFrame({"track": ["rank"] * 3, "rank": ranks, "label": [f"r{r}" for r in ranks]})
    good = rng.random(300) < 0.6
    outcomes = {0.125: good | (rng.random(300) < 0.3), 0.25: good, 0.5: good}
    items = pl.concat(
        pl.DataFrame({"label": f"r{r}", "item": range(300), "correct": c, "radius": [1.0] * 300})
        for r, c in outcomes.items()
    )
    claim = rank_claim(items, runs, params)  # the default sweep: one training run per rank
    assert claim.measured["best"] == 0.125 and claim.verdict == "inconclusive"
    assert "training-seed noise" in claim.reason
    seeded = BRONetParams.model_validate({"default": {"rank_sweep": {"seeds": [0, 1, 2]}}})
    claim = rank_claim(items, runs, seeded)
    assert claim.measured["best"] == 0.125 and claim.verdict == "fails"
