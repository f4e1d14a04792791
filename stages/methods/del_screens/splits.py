"""Random and disynthon splits of a DEL (train / valid / test per split column).

A disynthon split groups compounds by a pair of building blocks (by default cycles A and B) and puts whole
groups into valid or test, so no test compound shares its disynthon with a training compound: a model must
generalise to building-block pairs it never saw together.

Rows listed as `reserved` (the simulated screen's in-library held-out compounds) never train: the random split
puts them in test, the disynthon split puts their whole disynthon groups in test, so a held-out disynthon
never appears in training (KinDEL's intent) and the held-out −ρ of the two kinds measures what each hides.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.methods.del_screens.schema import SPLIT_COLUMNS

DISYNTHON_KEYS = {
    "ab": ("smiles_a", "smiles_b"),
    "ac": ("smiles_a", "smiles_c"),
    "bc": ("smiles_b", "smiles_c"),
}


def _assign(
    n_units: int, valid: float, test: float, rng: np.random.Generator, reserved: np.ndarray | None = None
) -> np.ndarray:
    """A train/valid/test label per unit (row or group), shuffled; at least one unit in each part. `reserved`
    units are always test (the test part grows to hold them all); the rest of test is drawn from the others."""
    reserved = np.unique(np.asarray([] if reserved is None else reserved, dtype=int))
    n_test = max(1, round(n_units * test), len(reserved))
    n_valid = max(1, round(n_units * valid))
    if n_test + n_valid >= n_units:
        raise ValueError(f"{n_units} units cannot be split into train, valid ({valid}) and test ({test})")
    free = np.setdiff1d(np.arange(n_units), reserved)
    n_free = len(free)
    labels = np.array(
        ["train"] * (n_free - (n_test - len(reserved)) - n_valid)
        + ["valid"] * n_valid
        + ["test"] * (n_test - len(reserved))
    )
    out = np.full(n_units, "test", dtype=labels.dtype)
    out[free] = labels[rng.permutation(n_free)]
    return out


def random_splits(
    n_rows: int, valid: float, test: float, seed: int, reserved: np.ndarray | None = None
) -> pl.DataFrame:
    """split1..5, each an independent shuffle of the rows (seed + split index); `reserved` rows always test."""
    return pl.DataFrame(
        {
            column: _assign(n_rows, valid, test, np.random.default_rng([seed, index]), reserved)
            for index, column in enumerate(SPLIT_COLUMNS)
        }
    )


def disynthon_groups(library: pl.DataFrame, key: str = "ab") -> np.ndarray:
    """The disynthon group index of every row (groups numbered in sorted key order)."""
    columns = DISYNTHON_KEYS[key]
    keys = library.select(pl.concat_str([pl.col(c) for c in columns], separator="|").alias("key"))["key"]
    unique = sorted(set(keys.to_list()))
    index = {value: i for i, value in enumerate(unique)}
    return np.array([index[value] for value in keys.to_list()])


def disynthon_splits(
    library: pl.DataFrame,
    valid: float,
    test: float,
    seed: int,
    key: str = "ab",
    reserved: np.ndarray | None = None,
) -> pl.DataFrame:
    """split1..5: whole disynthon groups assigned to train, valid or test (seed + split index); the groups of
    `reserved` rows always test."""
    groups = disynthon_groups(library, key)
    n_groups = int(groups.max()) + 1
    held = None if reserved is None else groups[np.asarray(reserved, dtype=int)]
    return pl.DataFrame(
        {
            column: _assign(n_groups, valid, test, np.random.default_rng([seed, 100 + index]), held)[groups]
            for index, column in enumerate(SPLIT_COLUMNS)
        }
    )


def training_overlap(table: pl.DataFrame, rows: np.ndarray) -> float:
    """Share of `rows` labelled train, over every split column of a split table (0 when no rows)."""
    if len(rows) == 0:
        return 0.0
    labels = np.stack([table[c].to_numpy()[rows] for c in table.columns if c.startswith("split")])
    return float((labels == "train").mean())
