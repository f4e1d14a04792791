"""Tabular synthesis: TabSDS's guarantees, the peers' interface, input checks."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats

from stages.core.errors import DataValidationError
from stages.methods.tabular.registry import SYNTHESIZERS
from stages.methods.tabular.synthesizers import TabSDS
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
