"""Random and disynthon splits of a DEL (train / valid / test per split column).

A disynthon split groups compounds by a pair of building blocks (by default cycles A and B) and puts whole
groups into valid or test, so no test compound shares its disynthon with a training compound: a model must
generalise to building-block pairs it never saw together.
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


def _assign(n_units: int, valid: float, test: float, rng: np.random.Generator) -> np.ndarray:
    """A train/valid/test label per unit (row or group), shuffled; at least one unit in each part."""
    n_test = max(1, round(n_units * test))
    n_valid = max(1, round(n_units * valid))
    if n_test + n_valid >= n_units:
        raise ValueError(f"{n_units} units cannot be split into train, valid ({valid}) and test ({test})")
    labels = np.array(["train"] * (n_units - n_test - n_valid) + ["valid"] * n_valid + ["test"] * n_test)
    return labels[rng.permutation(n_units)]


def random_splits(n_rows: int, valid: float, test: float, seed: int) -> pl.DataFrame:
    """split1..5, each an independent shuffle of the rows (seed + split index)."""
    return pl.DataFrame(
        {
            column: _assign(n_rows, valid, test, np.random.default_rng([seed, index]))
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
    library: pl.DataFrame, valid: float, test: float, seed: int, key: str = "ab"
) -> pl.DataFrame:
    """split1..5: whole disynthon groups assigned to train, valid or test (seed + split index)."""
    groups = disynthon_groups(library, key)
    n_groups = int(groups.max()) + 1
    return pl.DataFrame(
        {
            column: _assign(n_groups, valid, test, np.random.default_rng([seed, 100 + index]))[groups]
            for index, column in enumerate(SPLIT_COLUMNS)
        }
    )
