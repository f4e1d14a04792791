"""The VI-Net paper: params rules (both scales), the claims logic on made-up predictions (each verdict reachable),
the figures' summary table."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from stages.papers.vanishing_ideals.claims import baselines_claim, headline_claim, premise_claim
from stages.papers.vanishing_ideals.figures import summary_table
from stages.papers.vanishing_ideals.params import VanishingIdealsParams
from stages.papers.vanishing_ideals.timing import speed_claims

PARAMS = VanishingIdealsParams.model_validate(
    {"default": {"fit": {"cuts": [7, 9], "seeds": [0, 1, 2]}, "headline_cut": 9}}
)
N = 400


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"default": {"fit": {"cuts": [7, 14]}}}, "default.fit.cuts.*outside the network"),
        ({"default": {"fit": {"cuts": [9, 7]}}}, "default.fit.cuts.*increasing"),
        ({"default": {"headline_cut": 8}}, "default.headline_cut"),
        (
            {"default": {"fit": {"pca_components": 20}, "base": {"widths": [16, 16, 16]}}},
            "default.fit.pca_components",
        ),
        ({"default": {"fit": {"psi_grid": [0.0, 0.01]}}}, "default.fit.psi_grid"),
        ({"full": {"fit": {"cuts": [9, 12, 14, 18]}}}, "full.fit.cuts.*outside the network"),
        ({"full": {"headline_cut": 8}}, "full.headline_cut"),
        ({"scale": "paper"}, "scale"),
    ],
)
def test_bad_params_name_the_key(section, message):
    with pytest.raises(ValueError, match=message):
        VanishingIdealsParams.model_validate(section)


def test_scale_picks_the_grid_and_full_is_the_papers():
    default = VanishingIdealsParams()
    assert default.grid is default.default
    assert default.grid.base.n_convs == 13 and default.grid.fit.cuts == [7, 9, 11, 12]
    assert default.grid.base.image_side == 14 and default.grid.headline_cut == 9
    full = VanishingIdealsParams.model_validate({"scale": "full"})
    grid = full.grid
    assert grid is full.full
    assert grid.base.n_convs == 17 and grid.fit.cuts == [9, 12, 14, 16] and grid.headline_cut == 12
    assert grid.base.image_side == 28 and grid.base.test_images is None
    assert grid.base.train_images + grid.base.validation_images == 60_000
    assert grid.fit.max_points == 1000 and grid.fit.keep == 20 and len(grid.fit.seeds) == 5
    assert set(default.grid.fit.psi_grid) < set(grid.fit.psi_grid)


def test_params_yaml_default_is_the_models_and_full_validates(repo_root):
    import yaml

    section = yaml.safe_load((repo_root / "params.yaml").read_text())["vanishing_ideals"]
    params = VanishingIdealsParams.model_validate(section)
    assert params.scale == "default"
    assert params.default == VanishingIdealsParams().default
    assert params.full == VanishingIdealsParams().full
    full = VanishingIdealsParams.model_validate(section | {"scale": "full"})
    assert full.grid == params.full


def test_steps_read_the_chosen_grid():
    full = VanishingIdealsParams.model_validate(
        {"scale": "full", "full": {"fit": {"cuts": [7, 9], "seeds": [0, 1, 2]}, "headline_cut": 7}}
    )
    predictions, results = made_up(0.9, 0.5)
    for run in (0, 1, 2):
        predictions[f"7/vinet/{run}"] = predictions["full_net"].copy()
    claim = headline_claim(full, results, predictions, 175_000)
    assert claim.measured["cut"] == 7 and claim.verdict == "holds"


def made_up(
    vinet_right: float, baseline_right: float, seed: int = 0, ceiling_right: float | None = None
) -> tuple[dict, pl.DataFrame]:
    """Per-image correctness: the full net right on 90 %, VI-Net and the baselines on the given shares, the MLP
    on the pooled latent (the design check) on `ceiling_right` (default: the full net's images)."""
    rng = np.random.default_rng(seed)
    full = (rng.random(N) < 0.9).astype(np.uint8)
    predictions = {"full_net": full}
    rows = []
    for cut in (7, 9):
        for method, share in (
            ("vinet", vinet_right),
            ("linear_probe", baseline_right),
            ("random_monomials", baseline_right),
            ("latent_mlp", ceiling_right),
        ):
            for run in (0, 1, 2):
                correct = full.copy() if share is None else (rng.random(N) < share).astype(np.uint8)
                predictions[f"{cut}/{method}/{run}"] = correct
                rows.append(
                    {
                        "cut": cut,
                        "method": method,
                        "seed": run,
                        "test_accuracy": float(correct.mean()),
                        "parameters": 40_000,
                    }
                )
    return predictions, pl.DataFrame(rows)


def test_headline_holds_when_vinet_matches_and_fails_when_far_below():
    predictions, results = made_up(0.9, 0.5)
    for run in (0, 1, 2):  # VI-Net right on the same images as the full net
        predictions[f"9/vinet/{run}"] = predictions["full_net"].copy()
    assert headline_claim(PARAMS, results, predictions, 175_000).verdict == "holds"
    too_big = results.with_columns(pl.lit(150_000).alias("parameters"))  # accuracy matches, parameters do not
    assert headline_claim(PARAMS, too_big, predictions, 175_000).verdict == "fails"
    predictions, results = made_up(0.6, 0.5)
    claim = headline_claim(PARAMS, results, predictions, 175_000)
    assert claim.verdict == "fails" and claim.unit == "item"
    # the same shortfall where an MLP on the pooled latent falls short too: the cut decides, not VI-Net
    predictions, results = made_up(0.6, 0.5, ceiling_right=0.6)
    claim = headline_claim(PARAMS, results, predictions, 175_000)
    assert claim.verdict == "inconclusive" and "by design" in claim.reason


def test_baselines_claim_each_verdict():
    assert baselines_claim(PARAMS, *made_up(0.9, 0.5)).verdict == "holds"
    assert baselines_claim(PARAMS, *made_up(0.5, 0.9)).verdict == "fails"
    predictions, results = made_up(0.7, 0.7)
    predictions |= {
        key.replace("linear_probe", "vinet"): value
        for key, value in predictions.items()
        if "linear_probe" in key
    }
    assert baselines_claim(PARAMS, predictions, results).verdict in ("inconclusive", "fails")


def test_premise_claim_on_own_vs_other_means():
    rows = [
        {"cut": cut, "index": i, "label": i % 3, "own_mean_test": 0.05, "score_test": 0.5 + 0.01 * i}
        for cut in (7, 9)
        for i in range(6)
    ]
    assert premise_claim(PARAMS, pl.DataFrame(rows)).verdict == "holds"
    flipped = [row | {"own_mean_test": 1.0} for row in rows]
    assert premise_claim(PARAMS, pl.DataFrame(flipped)).verdict == "fails"


def test_speed_claims_from_rounds():
    seconds = {
        "full_net": [1.0, 1.1, 0.9, 1.0, 1.05],
        "vinet@7": [0.5, 0.55, 0.45, 0.5, 0.52],
        "vinet@9": [0.7, 0.75, 0.65, 0.7, 0.72],
    }
    small, depth = speed_claims(PARAMS, seconds, 1024)
    assert small.verdict == "holds" and depth.verdict == "holds"
    slow = seconds | {"vinet@9": [2.0, 2.1, 1.9, 2.0, 2.05]}
    assert speed_claims(PARAMS, slow, 1024)[0].verdict == "fails"


def test_summary_table_removed_share():
    results = pl.DataFrame(
        {
            "cut": [7, 7, 13],
            "method": ["vinet", "vinet", "full_net"],
            "seed": [0, 1, 0],
            "test_accuracy": [0.8, 0.9, 0.95],
            "parameters": [10, 10, 100],
            "features": [5, 5, 0],
            "psi": [0.01, 0.01, None],
        }
    )
    table = summary_table(results, 13)
    vinet = table.filter(pl.col("method") == "vinet")
    assert vinet["test_accuracy"][0] == pytest.approx(0.85)
    assert vinet["removed_pct"][0] == pytest.approx(46.15)
    assert table.filter(pl.col("method") == "full_net")["removed_pct"][0] == 0.0
