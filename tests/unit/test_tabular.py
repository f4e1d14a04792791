"""Tabular synthesis: TabSDS's guarantees, the peers' interface, input checks."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats

from stages.core.errors import DataValidationError
from stages.methods.tabular.metrics import (
    Encoder,
    MetricOptions,
    association_error,
    association_matrix,
    dcr,
    detection,
    domias_auroc,
    domias_prior_auroc,
    evaluate,
    marginal_distances,
    nearest_distances,
)
from stages.methods.tabular.registry import SYNTHESIZERS
from stages.methods.tabular.sdv_peers import DeepOptions, deep_batch, gradient_steps
from stages.methods.tabular.synthesizers import TabSDS
from stages.methods.tabular.table import infer_spec
from stages.methods.tabular.tabsds import (
    category_blocks,
    decode_blocks,
    equal_width_bins,
    ios_sample,
    jppds_round,
    random_ranks,
)


def mixed_table(n: int = 200, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return pl.DataFrame(
        {
            "x": x,
            "y": 2 * x + rng.normal(scale=0.5, size=n),
            "count": rng.integers(0, 50, size=n),
            "colour": rng.choice(["red", "green", "blue"], size=n, p=[0.6, 0.3, 0.1]),
            "flag": rng.random(n) < 0.2,
        }
    )


def tabsds(**options) -> TabSDS:
    return SYNTHESIZERS.build("tabsds", options)


def test_tabsds_keeps_ranges_counts_rows_and_dtypes():
    table = mixed_table()
    out = tabsds(n_levels=10).fit(table).sample(np.random.default_rng(1))
    assert out.height == table.height and out.schema == table.schema
    for column in ("x", "y", "count"):
        assert table[column].min() <= out[column].min() and out[column].max() <= table[column].max()
    for column in ("colour", "flag"):
        assert out[column].value_counts().sort(column).equals(table[column].value_counts().sort(column))
    assert not out["x"].equals(table["x"])  # not a copy


def test_tabsds_is_deterministic_under_its_seed():
    synthesizer = tabsds().fit(mixed_table())
    first = synthesizer.sample(np.random.default_rng(7))
    assert first.equals(synthesizer.sample(np.random.default_rng(7)))
    assert not first.equals(synthesizer.sample(np.random.default_rng(8)))


def test_many_levels_recover_the_rank_structure():
    """n_c → ∞: every bin holds one row, nothing is permuted within bins, so each output row carries the
    ranks of one original row: the rank matrices agree up to a row permutation."""
    table = (
        mixed_table()
        .select("x", "y", "count")
        .with_columns(pl.col("count").cast(pl.Float64) + pl.col("x") * 1e-3)
    )
    out = tabsds(n_levels=10**9).fit(table).sample(np.random.default_rng(3))
    ranks_in = np.column_stack([stats.rankdata(table[c]) for c in table.columns])
    ranks_out = np.column_stack([stats.rankdata(out[c]) for c in out.columns])
    assert {tuple(row) for row in ranks_in} == {tuple(row) for row in ranks_out}
    coarse = tabsds(n_levels=2).fit(table).sample(np.random.default_rng(3))
    rho = [stats.spearmanr(frame["x"], frame["y"]).statistic for frame in (table, coarse)]
    assert rho[1] < rho[0] - 0.05  # few bins: the joint structure is partly shuffled away


def test_ios_draws_lie_between_observed_values():
    values = np.random.default_rng(0).exponential(size=101)
    draws = ios_sample(values, 0.5, np.random.default_rng(1))
    assert len(draws) == 101 and values.min() <= draws.min() and draws.max() <= values.max()
    with pytest.raises(ValueError, match="n/2"):
        ios_sample(values, 0.9, np.random.default_rng(1))


def test_jppds_round_keeps_the_last_column_bins_jointly():
    rng = np.random.default_rng(0)
    matrix = np.column_stack([np.arange(12.0), np.arange(12.0) * 10, np.repeat([0.0, 1.0, 2.0], 4)])
    shuffled = jppds_round(matrix, 3, rng)
    assert sorted(map(tuple, shuffled[:, :2])) == sorted(map(tuple, matrix[:, :2]))  # rows permuted jointly
    for row in shuffled:
        assert row[0] // 4 == row[2]  # each row still sits in its own bin of the last column


def test_blocks_round_trip_and_bins():
    codes = np.array([2, 0, 1, 0, 2, 2])
    encoded, ends = category_blocks(codes, np.random.default_rng(0))
    assert sorted(encoded) == list(range(6))
    assert decode_blocks(encoded, ends).tolist() == codes.tolist()
    assert equal_width_bins(np.array([0.0, 0.49, 0.5, 1.0]), 2).tolist() == [0, 0, 1, 1]
    assert equal_width_bins(np.ones(3), 5).tolist() == [0, 0, 0]
    assert sorted(random_ranks(np.array([1.0, 1.0, 0.0]), np.random.default_rng(0))[:2]) == [1, 2]


def test_other_sizes_are_an_extension():
    out = tabsds().fit(mixed_table(n=50)).sample(np.random.default_rng(0), n=120)
    assert out.height == 120


@pytest.mark.parametrize("name", ["tabsjppds", "smote", "additive_noise"])
def test_cheap_peers_share_the_interface(name):
    table = mixed_table(n=60)
    synthesizer = SYNTHESIZERS.build(name, {}).fit(table)
    out = synthesizer.sample(np.random.default_rng(0))
    assert out.height == 60 and out.schema == table.schema
    assert out.equals(synthesizer.sample(np.random.default_rng(0)))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gaussian_copula", "ctgan", "tvae"])
def test_sdv_peers_share_the_interface(name):
    """SDV's import alone takes ~4 s, so these are slow; the pipeline's smoke run fits all three."""
    table = mixed_table(n=60)
    options = {} if name == "gaussian_copula" else {"epochs": 1, "batch_size": 20}
    synthesizer = SYNTHESIZERS.build(name, options).fit(table)
    out = synthesizer.sample(np.random.default_rng(0))
    assert out.height == 60 and out.schema == table.schema
    assert out.equals(synthesizer.sample(np.random.default_rng(0)))


def test_tabsjppds_keeps_the_original_values():
    table = mixed_table(n=60)
    out = SYNTHESIZERS.build("tabsjppds", {}).fit(table).sample(np.random.default_rng(0))
    assert sorted(out["x"]) == sorted(table["x"])


@pytest.mark.parametrize(
    ("table", "match"),
    [
        (pl.DataFrame({"a": []}, schema={"a": pl.Float64}), "empty"),
        (
            pl.DataFrame({"a": [1.0, 2.0], "b": [None, None]}, schema={"a": pl.Float64, "b": pl.Float64}),
            "'b'.*null",
        ),
        (pl.DataFrame({"a": [1.0]}), "1 row"),
        (
            pl.DataFrame({"a": [1.0, 2.0], "when": [pl.date(2020, 1, 1)] * 2}).with_columns(
                pl.date(2020, 1, 1).alias("when")
            ),
            "'when'.*dtype",
        ),
        (pl.DataFrame({"Age": [1.0, 2.0], "age ": [1.0, 2.0]}), "'Age' and 'age '.*clash"),
    ],
)
def test_bad_input_names_the_column(table, match):
    with pytest.raises(DataValidationError, match=match):
        tabsds().fit(table)


# ----------------------------------------------------------------------------------------------- metrics


def split_table(n: int = 240) -> tuple[pl.DataFrame, pl.DataFrame]:
    table = mixed_table(n=n).with_columns((pl.col("y") > 0).alias("flag"))
    return table.head(n // 2), table.tail(n // 2)


def test_identical_tables_are_undetectable_and_at_distance_zero():
    train, test = split_table()
    options = MetricOptions(trees=20, folds=3)
    spec = infer_spec(train)
    encoder = Encoder.of(train, spec)
    assert abs(detection(train, train, encoder, options, seed=0) - 0.5) < 0.05
    assert dcr(train, test, train, encoder)["dcr_median"] == 0.0
    assert association_error(train, train, spec) == 0.0
    assert marginal_distances(train, train, spec) == {"ks_mean": 0.0, "tv_mean": 0.0}


def test_metrics_separate_a_copy_from_noise():
    train, test = split_table()
    options = MetricOptions(trees=20, folds=3)
    copy = evaluate(train, test, train, "flag", "classification", options, seed=0)
    rng = np.random.default_rng(0)
    noise = train.with_columns(
        pl.Series("x", rng.normal(size=train.height) * 3), pl.Series("y", rng.normal(size=train.height) * 3)
    )
    noisy = evaluate(train, test, noise, "flag", "classification", options, seed=0)
    assert noisy["detection_auroc"] > 0.8 and noisy["dcr_median"] > copy["dcr_median"]
    assert noisy["utility_synthetic"] < copy["utility_synthetic"] == copy["utility_real"]
    assert noisy["association_error"] > 0.1 > copy["association_error"] and noisy["ks_mean"] > 0.1


def test_domias_flags_a_copy_of_the_training_rows():
    rng = np.random.default_rng(0)
    table = pl.DataFrame({"a": rng.normal(size=800), "b": rng.normal(size=800)})
    train, test = table.head(400), table.tail(400)
    encoder = Encoder.of(train, infer_spec(train))
    fresh = pl.DataFrame({"a": rng.normal(size=400), "b": rng.normal(size=400)})
    leaked, independent = (domias_auroc(train, test, synth, encoder, seed=0) for synth in (train, fresh))
    assert leaked > 0.55 and abs(independent - 0.5) < 0.05


def test_domias_prior_flags_a_copy_and_not_fresh_rows():
    rng = np.random.default_rng(0)
    table = pl.DataFrame({"a": rng.normal(size=800), "b": rng.normal(size=800)})
    train, test = table.head(400), table.tail(400)
    encoder = Encoder.of(train, infer_spec(train))
    fresh = pl.DataFrame({"a": rng.normal(size=400), "b": rng.normal(size=400)})
    leaked, independent = (
        domias_prior_auroc(train, test, synth, encoder, seed=0) for synth in (train, fresh)
    )
    assert leaked > 0.55 and abs(independent - 0.5) < 0.06


def test_signed_pearson_associations_count_a_sign_flip():
    x = np.linspace(0, 1, 50)
    real = pl.DataFrame({"a": x, "b": 2 * x})
    flipped = pl.DataFrame({"a": x, "b": -2 * x})
    spec = infer_spec(real)
    assert association_error(real, flipped, spec) == pytest.approx(0.0)  # |Spearman| hides it
    assert association_error(real, flipped, spec, "pearson") == pytest.approx(2.0)
    assert association_matrix(flipped, spec, "pearson")[0, 1] == pytest.approx(-1.0)


def test_dcr_references_run_both_ways():
    spec = infer_spec(pl.DataFrame({"a": [0.0, 1.0]}))
    train = pl.DataFrame({"a": [0.0, 10.0]})
    test = pl.DataFrame({"a": [1.0, 2.0, 3.0]})
    encoder = Encoder.of(train, spec)
    out = dcr(train, test, train, encoder)
    assert out["dcr_reference_median"] == 2.0  # held-out → training: 1, 2, 3
    assert out["dcr_reference_official_median"] == 4.0  # training → held-out (official): 1, 7


def test_deep_peers_take_several_steps_per_epoch():
    options = DeepOptions(epochs=100)  # batch from steps_per_epoch = 4
    for rows in (89, 221, 400):
        ctgan_batch, tvae_batch = deep_batch(options, rows, multiple=10), deep_batch(options, rows)
        assert gradient_steps(100, ctgan_batch, rows, ctgan=True) >= 400
        assert gradient_steps(100, tvae_batch, rows, ctgan=False) >= 400
    assert deep_batch(DeepOptions(batch_size=500), 89, multiple=10) == 500  # SDV's default: one step
    assert gradient_steps(5, 500, 89, ctgan=True) == 5


def test_arf_peer_runs_through_its_shims():
    pytest.importorskip("arfpy")
    table = mixed_table(n=120)
    out = SYNTHESIZERS.build("arf", {"num_trees": 5}).fit(table, np.random.default_rng(0))
    first, again = out.sample(np.random.default_rng(1)), out.sample(np.random.default_rng(1))
    assert first.schema == table.schema and first.height == table.height and first.equals(again)
    assert not any(first.select(pl.col(pl.Float64).is_nan().any()).row(0))


def test_hand_made_association_and_dcr():
    spec = infer_spec(pl.DataFrame({"a": [0.0, 1.0], "b": ["u", "v"]}))
    assert np.allclose(
        association_matrix(pl.DataFrame({"a": [0.0, 1.0, 0.0, 1.0], "b": ["u", "v", "u", "v"]}), spec), 1.0
    )
    assert nearest_distances(np.array([[0.0, 0.0]]), np.array([[3.0, 4.0], [6.0, 8.0]])).tolist() == [5.0]


def test_evaluate_refuses_a_synthetic_table_with_other_columns():
    train, test = split_table()
    with pytest.raises(DataValidationError, match="synthetic table"):
        evaluate(train, test, train.drop("x"), None, "classification", MetricOptions(), seed=0)


def test_an_undeclared_id_column_is_refused_and_a_declared_one_is_left_out():
    from stages.methods.tabular.table import leave_out_ids

    table = pl.DataFrame(
        {"rid": list(range(20)), "x": [float(v % 7) for v in range(20)], "y": ["a", "b"] * 10}
    )
    with pytest.raises(DataValidationError, match=r"'rid' looks like a row id.*--id-column rid"):
        leave_out_ids(table, [], [], "mine.csv")
    assert leave_out_ids(table, ["rid"], [], "mine.csv").columns == ["x", "y"]
    assert leave_out_ids(table, [], ["rid"], "mine.csv").columns == table.columns  # a declared category stays
    with pytest.raises(DataValidationError, match=r"id column.*not in the table: key"):
        leave_out_ids(table, ["key"], [], "mine.csv")


def test_an_infinite_cell_is_named_with_its_column_count_and_row():
    table = pl.DataFrame({"x": [1.0, 2.0, float("inf"), 4.0], "y": ["a", "b", "a", "b"]})
    with pytest.raises(DataValidationError, match=r"column 'x': 1 inf value\(s\), first at row 2"):
        infer_spec(table, where="mine.csv")
