"""The synthesizer interface: `fit(table)` on a Polars table, then `sample(rng)` → a table like it.

`sample(rng)` returns as many rows as the training table (the paper's setting); `sample(rng, n)` other sizes,
an extension each synthesizer documents. Subclasses that work on arrays implement `_sample_arrays`, getting
the numeric columns as floats and the categorical ones as integer codes; `EncodedTable` converts both ways.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from stages.core.params import StrictModel
from stages.methods.tabular.table import (
    TableSpec,
    categorical_column,
    category_codes,
    infer_spec,
    numeric_column,
)


@dataclass
class EncodedTable:
    """A checked table as arrays: numeric (n × p_num floats), codes (n × p_cat ints), each column's levels."""

    spec: TableSpec
    numeric: np.ndarray
    codes: np.ndarray
    levels: dict[str, list]

    @classmethod
    def of(cls, table: pl.DataFrame, spec: TableSpec) -> EncodedTable:
        numeric = (
            np.column_stack([table[column].cast(pl.Float64).to_numpy() for column in spec.numeric])
            if spec.numeric
            else np.empty((table.height, 0))
        )
        codes, levels = [], {}
        for column in spec.categorical:
            column_codes, levels[column] = category_codes(table[column])
            codes.append(column_codes)
        code_matrix = np.column_stack(codes) if codes else np.empty((table.height, 0), dtype=np.int64)
        return cls(spec, numeric, code_matrix, levels)

    @property
    def n_rows(self) -> int:
        return max(len(self.numeric), len(self.codes))

    def decode(self, numeric: np.ndarray, codes: np.ndarray) -> pl.DataFrame:
        """Arrays in this table's layout back to a Polars table with the training columns and dtypes."""
        series = {
            column: numeric_column(numeric[:, j], column, self.spec)
            for j, column in enumerate(self.spec.numeric)
        }
        for j, column in enumerate(self.spec.categorical):
            series[column] = categorical_column(self.levels[column], codes[:, j], column, self.spec)
        return pl.DataFrame([series[column] for column in self.spec.columns])


class Synthesizer:
    """Base class: validated `Options`, `fit` (checks and encodes the table), `sample`."""

    name = "synthesizer"

    class Options(StrictModel):
        pass

    def __init__(self, options: StrictModel | None = None, categorical: Sequence[str] = ()) -> None:
        self.options = options if options is not None else self.Options()
        self.categorical = tuple(categorical)
        self.data: EncodedTable | None = None

    def fit(self, table: pl.DataFrame, rng: np.random.Generator | None = None) -> Synthesizer:
        """Check `table` (errors name the column) and learn from it; `rng` seeds stochastic training."""
        spec = infer_spec(table, self.categorical, where=f"{self.name} input")
        self.data = EncodedTable.of(table, spec)
        self._fit(rng if rng is not None else np.random.default_rng(0))
        return self

    def sample(self, rng: np.random.Generator, n: int | None = None) -> pl.DataFrame:
        """A synthetic table: the training size unless `n` is given."""
        if self.data is None:
            raise RuntimeError(f"{self.name}: call fit before sample")
        n = self.data.n_rows if n is None else n
        if n < 1:
            raise ValueError(f"{self.name}: n must be ≥ 1, got {n}")
        return self._sample(rng, n)

    def _fit(self, rng: np.random.Generator) -> None:
        """Learn from `self.data` (array synthesizers that only resample need nothing)."""

    def _sample(self, rng: np.random.Generator, n: int) -> pl.DataFrame:
        numeric, codes = self._sample_arrays(rng, n)
        return self.data.decode(numeric, codes)

    def _sample_arrays(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError
