"""DEL screens: count likelihoods vs scipy, Poisson bounds, enumeration, splits, the KinDEL loader on a fixture
in the real format, fingerprints, DEL-Compose's offset recovery."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest
import torch
from scipy import stats

from stages.core.errors import DataValidationError, MissingSourceError
from stages.methods.del_screens import compose, counts, files, library, simulate, splits
from stages.methods.del_screens.config import ComposeOptions, SimulationOptions
from stages.methods.del_screens.fingerprints import morgan, morgan_loop, parse_smiles
from stages.methods.del_screens.schema import COUNT_COLUMNS, LIBRARY_COLUMNS, SPLIT_COLUMNS


@pytest.fixture(scope="module")
def screen() -> simulate.SimulatedScreen:
    return simulate.simulate(SimulationOptions(per_cycle=5, heldout=10, external=3, outside_blocks=2))


# ------------------------------------------------------------------------------------------- likelihoods


def test_poisson_and_zip_match_scipy_on_hand_cases():
    k = torch.tensor([0.0, 0.0, 1.0, 3.0, 7.0])
    rate = torch.tensor([0.5, 2.0, 0.5, 2.0, 4.0])
    logit = torch.tensor([-1.0, 0.3, 0.0, 2.0, -3.0])
    pi = 1 / (1 + np.exp(-logit.numpy()))
    expected_poisson = stats.poisson.logpmf(k.numpy(), rate.numpy())
    np.testing.assert_allclose(counts.poisson_log_prob(k, rate).numpy(), expected_poisson, rtol=1e-5)
    expected_zip = np.log(pi * (k.numpy() == 0) + (1 - pi) * stats.poisson.pmf(k.numpy(), rate.numpy()))
    np.testing.assert_allclose(counts.zip_log_prob(k, rate, logit).numpy(), expected_zip, rtol=1e-5)
    # by hand: k = 0, λ = 0.5, π = σ(−1): log(π + (1 − π) e^{−0.5})
    by_hand = np.log(pi[0] + (1 - pi[0]) * np.exp(-0.5))
    assert float(counts.zip_log_prob(k[:1], rate[:1], logit[:1])) == pytest.approx(by_hand, rel=1e-6)


def test_negative_binomial_matches_torch_and_scipy():
    k = torch.tensor([0.0, 2.0, 5.0])
    total = torch.tensor([1.5, 3.0, 0.7])
    logit = torch.tensor([0.2, -1.0, 1.5])
    p = torch.sigmoid(logit)
    ours = counts.negative_binomial_log_prob(k, total, logit)
    reference = torch.distributions.NegativeBinomial(total_count=total, probs=p).log_prob(k)
    np.testing.assert_allclose(ours.numpy(), reference.numpy(), rtol=1e-5)
    # scipy counts failures with success probability 1 − p
    np.testing.assert_allclose(
        ours.numpy(), stats.nbinom.logpmf(k.numpy(), total.numpy(), 1 - p.numpy()), rtol=1e-5
    )


def test_exact_poisson_bounds_and_enrichment():
    lower, upper = counts.poisson_mean_bounds(np.array([0, 5]), n=1)
    np.testing.assert_allclose(lower, [0.0, 1.6235], atol=1e-4)
    np.testing.assert_allclose(upper, [3.6889, 11.6683], atol=1e-4)
    target, matrix = np.array([[5, 0, 0]]), np.array([[0, 0, 0]])
    assert counts.enrichment(target, matrix)[0] == pytest.approx((1.6235 / 3) / (3.6889 / 3), abs=1e-4)
    with pytest.raises(ValueError, match="non-negative"):
        counts.poisson_mean_bounds(np.array([-1]), 1)


# ------------------------------------------------------------------------------------- library and splits


def test_every_compound_parses_and_holds_its_three_synthons(screen):
    from rdkit import Chem

    assert screen.library.height == 125 and screen.library["smiles"].n_unique() == 125
    for row in screen.library.iter_rows(named=True):
        mol = Chem.MolFromSmiles(row["smiles"])
        assert mol is not None
        blocks = [Chem.MolFromSmiles(row[c]) for c in ("smiles_a", "smiles_b", "smiles_c")]
        for block, kind in zip(
            (row["smiles_a"], row["smiles_b"], row["smiles_c"]), library.CLASSES, strict=True
        ):
            assert mol.HasSubstructMatch(library.synthon_query(block, kind)), (row["smiles"], block)
        core = Chem.MolFromSmiles(library.CORE).GetNumHeavyAtoms()
        assert mol.GetNumHeavyAtoms() == core + sum(b.GetNumHeavyAtoms() for b in blocks) - 3  # three O lost


def test_classify_keeps_single_group_blocks():
    assert library.classify("NCCc1ccccc1") == "amine"
    assert library.classify("OC(=O)c1ccccc1") == "acid"
    assert library.classify("O=Cc1ccccc1") == "aldehyde"
    assert library.classify("NCC(=O)O") is None  # amine and acid
    assert library.classify("NCCN") is None  # two amines


def test_disynthon_split_never_shares_its_key(screen):
    table = splits.disynthon_splits(screen.library, 0.1, 0.2, seed=3, key="ab")
    keys = screen.library.select(pl.concat_str("smiles_a", "smiles_b", separator="|"))["smiles_a"].to_numpy()
    for column in SPLIT_COLUMNS:
        labels = table[column].to_numpy()
        train, test, valid = (set(keys[labels == part]) for part in ("train", "test", "valid"))
        assert test and valid and not train & test and not train & valid and not test & valid
    random = splits.random_splits(100, 0.1, 0.1, seed=0)
    assert (random["split1"] == "test").sum() == 10 and not random["split1"].equals(random["split2"])


def test_heldout_compounds_never_train_and_their_disynthons_stay_out(screen):
    """Issue 37.4: no in-library held-out compound is a training row of either kind, and on the disynthon split
    no training row shares a held-out compound's A×B pair."""
    heldout = set(screen.heldout["ondna"].filter(pl.col("molecule_hash").is_not_null())["smiles"])
    smiles = screen.library["smiles"].to_numpy()
    keys = (screen.library["smiles_a"] + "|" + screen.library["smiles_b"]).to_numpy()
    held_keys = {k for s, k in zip(smiles, keys, strict=True) if s in heldout}
    for kind, table in screen.splits.items():
        for column in SPLIT_COLUMNS:
            train = table[column].to_numpy() == "train"
            assert not heldout & set(smiles[train]), (kind, column)
            if kind == "disynthon":
                assert not held_keys & set(keys[train]), column
    assert screen.parameters["heldout_in_training"] == {"random": 0.0, "disynthon": 0.0}
    # pair_sd 1.5 against three blocks of sd 1 (about a third), measured on 25 pairs here
    assert 0.15 < screen.parameters["pair_variance_share"] < 0.7


def test_reserved_units_are_test_and_the_rest_keep_their_shares():
    random = splits.random_splits(100, 0.1, 0.1, seed=0, reserved=np.arange(15))
    labels = random["split1"].to_numpy()
    assert (
        (labels[:15] == "test").all() and (labels == "test").sum() == 15 and (labels == "valid").sum() == 10
    )
    few = splits.random_splits(100, 0.1, 0.1, seed=0, reserved=np.arange(4))["split2"].to_numpy()
    assert (few[:4] == "test").all() and (few == "test").sum() == 10
    assert splits.training_overlap(random, np.arange(15)) == 0.0
    assert splits.training_overlap(random, np.arange(100)) == pytest.approx(0.75)


def test_simulation_is_deterministic_and_enrichment_tracks_affinity(screen):
    again = simulate.simulate(SimulationOptions(per_cycle=5, heldout=10, external=3, outside_blocks=2))
    assert again.library.equals(screen.library) and again.heldout["ondna"].equals(screen.heldout["ondna"])
    rho = stats.spearmanr(screen.library["target_enrichment"], screen.truth["affinity_ondna"]).statistic
    assert rho > 0.5
    external = screen.heldout["offdna"].filter(pl.col("molecule_hash").is_null())
    assert external.height == 3 and not set(external["smiles"]) & set(screen.library["smiles"])


# ---------------------------------------------------------------------------------------- the loader


def real_format_folder(root, rows: int = 6):
    """A tiny KinDEL folder as the real files are written (pandas; int counts; index column in the CSVs;
    `smiles_c` joining fragments with ", "; NaN hash and counts for an external compound)."""
    smiles = ["CCO", "CCN", "CCC", "c1ccccc1O", "CC(=O)O", "CCCl"][:rows]
    frame = pd.DataFrame(
        {
            "smiles": smiles,
            "molecule_hash": [f"h{i}" for i in range(rows)],
            "smiles_a": ["C"] * rows,
            "smiles_b": ["O"] * rows,
            "smiles_c": ["C, N"] * rows,
            **{c: np.arange(rows) % 4 for c in COUNT_COLUMNS},
            "target_enrichment": np.linspace(0, 1, rows),
        }
    )
    (root / "splits").mkdir(parents=True)
    (root / "heldout").mkdir()
    frame.to_parquet(root / "ddr1_1M.parquet")
    split = pd.DataFrame({c: (["train"] * (rows - 2)) + ["valid", "test"] for c in SPLIT_COLUMNS})
    split.to_parquet(root / "splits" / "ddr1_random.parquet")
    split.to_parquet(root / "splits" / "ddr1_disynthon.parquet")
    heldout = pd.concat(
        [frame.head(3), pd.DataFrame({"smiles": ["CCOC"], "smiles_a": ["C"]})], ignore_index=True
    )
    heldout["kd"] = [10.0, 200.0, 3000.0, 5.0]
    heldout.to_csv(root / "heldout" / "ddr1_ondna.csv")
    heldout.to_csv(root / "heldout" / "ddr1_offdna.csv")
    return frame


def test_loader_reads_the_real_format(tmp_path):
    real_format_folder(tmp_path)
    screen, reports = files.read_folder(tmp_path, "ddr1")
    assert list(screen.library.columns) == list(LIBRARY_COLUMNS)
    assert screen.library["seq_load"].dtype == pl.Float64
    assert screen.heldout["ondna"]["molecule_hash"].null_count() == 1 and screen.heldout["ondna"].height == 4
    assert all(report["success"] for report in reports.values())
    limited, _ = files.read_folder(tmp_path, "ddr1", max_rows=3, seed=1)
    assert limited.library.height == 3 and limited.splits["random"].height == 3


def test_loader_errors_name_file_row_and_column(tmp_path):
    frame = real_format_folder(tmp_path)
    with pytest.raises(MissingSourceError, match=r"mapk14_1M\.parquet"):
        files.read_folder(tmp_path, "mapk14")
    broken = frame.copy()
    broken.loc[2, "smiles"] = "C1CC(("
    broken.to_parquet(tmp_path / "ddr1_1M.parquet")
    with pytest.raises(DataValidationError, match=r"row 2, column 'smiles'"):
        files.read_folder(tmp_path, "ddr1")
    broken = frame.drop(columns="seq_matrix_2")
    broken.to_parquet(tmp_path / "ddr1_1M.parquet")
    with pytest.raises(DataValidationError, match=r"missing column.*seq_matrix_2"):
        files.read_folder(tmp_path, "ddr1")
    broken = frame.copy()
    broken.loc[4, "seq_target_3"] = -2
    broken.to_parquet(tmp_path / "ddr1_1M.parquet")
    with pytest.raises(DataValidationError, match=r"row 4, column 'seq_target_3'"):
        files.read_folder(tmp_path, "ddr1")


def test_simulated_screen_round_trips_through_the_folder(screen, tmp_path):
    files.write_folder(files.Screen(screen.library, screen.splits, screen.heldout), tmp_path, "sim")
    read, reports = files.read_folder(tmp_path, "sim")
    assert read.library.equals(screen.library)
    assert read.heldout["offdna"].equals(screen.heldout["offdna"])
    assert all(report["success"] for report in reports.values())


# ------------------------------------------------------------------------------ fingerprints and models


def test_batched_fingerprints_equal_the_loop_and_bad_smiles_name_the_row():
    mols = parse_smiles(["CCO", "C[C@H](N)C(=O)O", "c1ccccc1"])
    np.testing.assert_array_equal(
        morgan(mols, radius=3, chirality=True), morgan_loop(mols, radius=3, chirality=True)
    )
    with pytest.raises(DataValidationError, match=r"mine: row 1, column 'smiles'"):
        parse_smiles(["CC", "not a molecule"], "mine")


def test_compose_recovers_planted_replicate_offsets():
    options = SimulationOptions(
        per_cycle=6, replicate_sd=0.5, load_mean=600, outside_blocks=1, heldout=5, external=1, seed=4
    )
    screen = simulate.simulate(options)
    model_options = ComposeOptions(hidden=32, epochs=40, patience=40, learning_rate=3e-3)
    data = compose.featurise(screen.library, model_options)
    labels = screen.splits["random"]["split1"].to_numpy()
    fitted = compose.fit(
        model_options,
        data.take(np.flatnonzero(labels != "valid")),
        data.take(np.flatnonzero(labels == "valid")),
        seed=0,
    )
    assert compose.offset_recovery(fitted.offsets(), screen.parameters) > 0.9
    # the score ranks compounds by the hidden on-DNA affinity
    assert stats.spearmanr(fitted.score(data), screen.truth["affinity_ondna"]).statistic > 0.5


def test_factorized_and_nb_variants_train():
    screen = simulate.simulate(SimulationOptions(per_cycle=3, outside_blocks=1, heldout=3, external=1))
    for variant, likelihood in (("factorized", "zip"), ("full", "nb")):
        options = ComposeOptions(variant=variant, likelihood=likelihood, hidden=16, heads=4, epochs=3)
        data = compose.featurise(screen.library, options)
        fitted = compose.fit(options, data, data, seed=0)
        assert len(fitted.history) == 3 and np.isfinite(fitted.score(data)).all()


def test_random_forest_on_two_jobs_predicts_the_same_bytes():
    from stages.methods.del_screens.baselines import REGRESSORS

    rng = np.random.default_rng(0)
    X, y = rng.integers(0, 2, (300, 200)).astype(np.uint8), rng.normal(size=300)
    runs = [REGRESSORS.build("rf", {"n_jobs": 2}).fit(X, y, seed=1).predict(X) for _ in range(3)]
    assert all(run.tobytes() == runs[0].tobytes() for run in runs)
