"""The KinDEL paper: params errors, the metrics of one fit, claims logic on made-up scores, score your own
library."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from stages.core.claims import DesignError
from stages.core.errors import DataValidationError, ParamsError
from stages.core.params import read_params_file, validate_section
from stages.methods.del_screens.files import Screen
from stages.methods.del_screens.scoring import score_file
from stages.papers.kindel.claims import disynthon_claim, rivals, sanity_claim, winners_claim
from stages.papers.kindel.evaluate import ranks, summary
from stages.papers.kindel.params import KinDELParams
from stages.papers.kindel.pipeline import folder_deps
from stages.papers.kindel.scores import COLUMNS, heldout_scores
from tests.conftest import REPO_ROOT
from tests.unit.test_del_screens import real_format_folder


def params(**changes) -> KinDELParams:
    raw = read_params_file(REPO_ROOT / "params.yaml")["kindel"]
    raw.update(changes)
    return validate_section(KinDELParams, raw, "kindel")


def test_params_name_the_bad_key():
    with pytest.raises(ParamsError, match=r"baselines\.rf"):
        params(baselines={"rf": {"model": "rf", "options": {"n_estimators": 0}}})
    with pytest.raises(ParamsError, match=r"needs kindel\.folder"):
        params(source="folder")
    with pytest.raises(ParamsError, match="claims name models not run"):
        params(claims={"on_dna_best": "gin"})
    assert folder_deps({"kindel": {"source": "folder", "folder": "/data/kindel"}}) == {
        "kindel_folder": "/data/kindel"
    }
    assert folder_deps({"kindel": {"source": "simulated"}}) == {}


def test_heldout_scores_are_minus_spearman_in_four_columns():
    table = pl.DataFrame({"molecule_hash": ["a", "b", "c", None], "kd": [1.0, 10.0, 100.0, 0.5]})
    screen = Screen(pl.DataFrame(), {}, {"ondna": table, "offdna": table})
    rows = [
        {"set": kind, "row": i, "prediction": p}
        for kind in ("ondna", "offdna")
        for i, p in enumerate([3.0, 2.0, 1.0, 0.0])
    ]
    scores = heldout_scores(screen, pl.DataFrame(rows))
    assert scores["in_library_ondna"] == pytest.approx(1.0)  # perfect order among library compounds
    assert scores["extended_offdna"] == pytest.approx(
        -0.2
    )  # the external one (lowest Kd, lowest score) breaks it


def made_up_scores(disynthon_penalty: float) -> pl.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for model, level in (("rf", 0.8), ("xgboost", 0.6), ("knn", 0.5), ("dnn", 0.4), ("compose_full", 0.7)):
        for kind in ("random", "disynthon"):
            for split in (1, 2, 3):
                shift = disynthon_penalty if kind == "disynthon" else 0.0
                noise = rng.normal(0, 0.005)
                row = {"model": model, "kind": kind, "split": split, "test_mse": 10 + 20 * shift + noise}
                row |= {c: level - shift + noise for c in COLUMNS}
                row["in_library_offdna"] += 0.3 if model == "compose_full" else 0.0
                row["extended_offdna"] += 0.3 if model == "compose_full" else 0.0
                row["test_rho_affinity"] = 0.9 + noise
                rows.append(row)
    return pl.DataFrame(rows)


def test_a_compose_winner_is_not_compared_with_the_other_compose_variant():
    assert rivals("compose_full", params()) == ["rf", "xgboost", "knn", "dnn"]
    assert rivals("rf", params()) == ["xgboost", "knn", "dnn", "compose_full", "compose_factorized"]


def test_claims_follow_the_made_up_scores():
    p = params(default={"compose": ["compose_full"]})
    real = params(default={"compose": ["compose_full"]}, source="folder", folder="/data/kindel")
    assert disynthon_claim(made_up_scores(0.2), real).verdict == "holds"  # real files: judged
    assert disynthon_claim(made_up_scores(-0.2), real).verdict == "fails"
    assert disynthon_claim(made_up_scores(0.0), real).verdict == "inconclusive"
    assert disynthon_claim(made_up_scores(0.2), real).n == 3  # splits per kind, not both kinds together
    scores = made_up_scores(0.1)
    rank_table = ranks(summary(scores), p.models)
    assert rank_table["random"]["in_library_ondna"]["rf"] == 1
    assert rank_table["random"]["extended_offdna"]["compose_full"] == 1
    assert winners_claim(scores, real, rank_table).verdict == "holds"  # real files: judged
    planted = {"beta_matrix": [0.0, 0.5, -0.5], "beta_target": [0.1, 0.0, -0.1]}
    offsets = {"compose_full": {"random": {str(s): planted for s in (1, 2, 3)}}}
    offsets["compose_full"]["random"]["2"] = {
        "beta_matrix": [0.0, 0.4, -0.5],
        "beta_target": [0.1, 0.0, -0.2],
    }
    assert sanity_claim(scores, offsets, planted, True, p).verdict == "holds"
    assert sanity_claim(scores, offsets, {}, False, p).verdict == "inconclusive"


def test_column_winners_is_inconclusive_by_design_on_the_simulated_screen():
    p = params(default={"compose": ["compose_full"]})  # source: simulated
    scores = made_up_scores(0.1)
    claim = winners_claim(scores, p, ranks(summary(scores), p.models))
    assert claim.verdict == "inconclusive" and claim.reason.startswith("Inconclusive by design")
    assert "linker" in claim.reason and all(item.verdict == "holds" for item in claim.evidence)
    assert claim.unit == "seed" and claim.n == 3


def test_disynthon_welch_interval_is_refused_below_three_splits():
    p = params(default={"compose": ["compose_full"]}, source="folder", folder="/data/kindel")
    two = made_up_scores(0.2).filter(pl.col("split") < 3)
    with pytest.raises(DesignError, match="disynthon_harder"):
        disynthon_claim(two, p)
    # three splits run, one −ρ undefined (NaN): undecided, not refused
    nan = made_up_scores(0.2).with_columns(
        pl.when((pl.col("split") == 3) & (pl.col("kind") == "random"))
        .then(float("nan"))
        .otherwise(pl.col("in_library_ondna"))
        .alias("in_library_ondna")
    )
    held = next(
        item
        for item in disynthon_claim(nan, p).evidence
        if item.name == "rf: heldout_mean disynthon − random"
    )
    assert held.verdict == "inconclusive" and "defined values" in held.note


def test_sanity_correlations_keep_their_interval_inside_minus_one_to_one():
    p = params(default={"compose": ["compose_full"]})
    scores = made_up_scores(0.1)
    planted = {"beta_matrix": [0.0, 0.5, -0.5], "beta_target": [0.1, 0.0, -0.1]}
    fits = {
        "1": planted,
        "2": planted,
        "3": {"beta_matrix": [0.0, 0.3, -0.5], "beta_target": [0.1, 0.05, -0.1]},
    }
    claim = sanity_claim(scores, {"compose_full": {"random": fits}}, planted, True, p)
    recovery = claim.evidence[0]
    assert "clipped to [-1, 1]" in recovery.interval_kind and recovery.interval[1] == 1.0  # t: above 1
    assert recovery.verdict == "holds"
    worse = scores.with_columns(pl.lit(-0.5).alias("test_rho_affinity"))
    assert sanity_claim(worse, {"compose_full": {"random": fits}}, planted, True, p).verdict == "fails"


def test_score_your_own_library(tmp_path):
    real_format_folder(tmp_path / "kindel")
    mine = tmp_path / "mine.csv"
    pl.DataFrame({"name": ["x", "y"], "smiles": ["CCOCC", "c1ccncc1"]}).write_csv(mine)
    summary_ = score_file(tmp_path / "kindel", "ddr1", mine, tmp_path / "out.csv", model="rf")
    out = pl.read_csv(tmp_path / "out.csv")
    assert out.columns == ["name", "smiles", "score"] and out.height == 2 and summary_["scored"] == 2
    pl.DataFrame({"name": ["x"], "smiles": ["C1CC(("]}).write_csv(mine)
    with pytest.raises(DataValidationError, match=r"row 0, column 'smiles'"):
        score_file(tmp_path / "kindel", "ddr1", mine, tmp_path / "out.csv", model="rf")
    with pytest.raises(DataValidationError, match="no column 'SMILES'"):
        score_file(tmp_path / "kindel", "ddr1", mine, tmp_path / "out.csv", smiles_column="SMILES")


def test_rank_table_leaves_out_metrics_on_other_scales():
    """Issue 37.4: DEL-Compose's score is not on target_enrichment's scale, so its test MSE is not ranked."""
    p = params()
    rank_table = ranks(summary(made_up_scores(0.2)), p.models, tuple(p.compose))
    for kind in ("random", "disynthon"):
        assert set(rank_table[kind]["test_mse"]) == set(p.baseline_labels)
        assert sorted(rank_table[kind]["test_mse"].values()) == list(range(1, len(p.baseline_labels) + 1))
        assert "compose_full" in rank_table[kind]["in_library_ondna"]  # −ρ is on one scale for every model


def test_disynthon_claim_is_inconclusive_by_design_on_the_simulated_screen():
    """Issue 37.4: the simulator decides the claim (nothing in it can make a disynthon split easier); its
    intervals stay as a record with the measured pair share and training overlap."""
    p = params()
    planted = {"heldout_in_training": {"random": 0.0, "disynthon": 0.0}, "pair_variance_share": 0.33}
    claim = disynthon_claim(made_up_scores(0.2), p, planted)
    assert claim.verdict == "inconclusive" and claim.reason.startswith("Inconclusive by design")
    assert "33%" in claim.reason and all(item.verdict == "holds" for item in claim.evidence)
    assert claim.measured["pair_variance_share"] == 0.33
    assert claim.measured["heldout_in_training"]["disynthon"] == 0.0
    assert set(claim.measured["means_over_splits"]) == set(p.models)
