"""ARF (adversarial random forests, Watson et al. 2023) through arfpy 0.1.1, the peer the TabSDS paper runs
through synthcity, behind the same interface.

arfpy 0.1.1 is its only release and predates NumPy 2.4 and pandas 3; three documented shims, all here (the
library itself is untouched):

1. `numpy.in1d` (removed in NumPy 2.4; arfpy calls it when pruning trees): arfpy's module sees a NumPy proxy
   whose `in1d` is `numpy.isin` on the flattened array (what `in1d` returned); every other name is NumPy's.
2. Integer column labels: `forge` indexes a boolean Series by position (`factor_cols[j]`), which pandas 3 reads
   as a label; the frame handed to arfpy has columns 0..p−1 (positions and labels coincide), renamed back after.
3. Category dtypes: arfpy finds categorical columns by dtype `object` or `category`; pandas 3 stores strings as
   `str`, so categorical columns are passed as `category` of integer codes (numeric ones as float64).

arfpy draws from NumPy's global generator (and scikit-learn's forests from it, `random_state=None`), so `fit`
and `sample` seed it from the caller's `rng` (same rng → same table). Options are arfpy's (and synthcity's)
defaults.
"""

from __future__ import annotations

import random
import types
import warnings

import numpy as np
from pydantic import Field

from stages.core.params import StrictModel
from stages.methods.tabular.base import Synthesizer


class _NumpyWithIn1d(types.ModuleType):
    """NumPy as arfpy's module sees it: NumPy's names, plus `in1d` (shim 1)."""

    def __getattr__(self, name: str):
        return getattr(np, name)

    @staticmethod
    def in1d(values, test_values) -> np.ndarray:
        return np.isin(np.ravel(values), test_values)


def _arfpy():
    try:
        from arfpy import arf as module
    except ImportError as error:  # pragma: no cover - the pinned environment has it
        raise ImportError("the `arf` peer needs arfpy==0.1.1 (pip install arfpy==0.1.1)") from error
    if not hasattr(np, "in1d") and not isinstance(module.np, _NumpyWithIn1d):
        module.np = _NumpyWithIn1d("numpy")
    return module


def _seed_global(rng: np.random.Generator) -> None:
    seed = int(rng.integers(2**31 - 1))
    random.seed(seed)
    np.random.seed(seed)


class ARF(Synthesizer):
    """arfpy's `arf` (adversarial loop of random forests), `forde` (truncated-normal / multinomial leaves) and
    `forge` (sampling); other sizes `n` are arfpy's own."""

    name = "arf"

    class Options(StrictModel):
        num_trees: int = Field(30, ge=1, description="trees per forest (arfpy default)")
        delta: float = Field(0.0, ge=0, le=0.5, description="stop when OOB accuracy ≤ 0.5 + delta")
        max_iters: int = Field(10, ge=0, description="adversarial rounds at most")
        min_node_size: int = Field(5, ge=1, description="rows per leaf at least")

    def _frame(self):
        import pandas as pd

        data = self.data
        columns = {}
        for j, column in enumerate(data.spec.numeric):
            columns[column] = pd.Series(data.numeric[:, j], dtype="float64")
        for j, column in enumerate(data.spec.categorical):
            levels = range(len(data.levels[column]))
            columns[column] = pd.Series(pd.Categorical(data.codes[:, j], categories=levels))
        frame = pd.DataFrame({column: columns[column] for column in data.spec.columns})
        frame.columns = range(frame.shape[1])  # shim 2: positions are labels
        return frame

    def _fit(self, rng: np.random.Generator) -> None:
        module = _arfpy()
        _seed_global(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            options = self.options
            self.model = module.arf(
                self._frame(),
                num_trees=options.num_trees,
                delta=options.delta,
                max_iters=options.max_iters,
                min_node_size=options.min_node_size,
                verbose=False,
            )
            self.model.forde()

    def _sample_arrays(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        _seed_global(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frame = self.model.forge(n)
        spec = self.data.spec
        position = {column: index for index, column in enumerate(spec.columns)}
        numeric = (
            np.column_stack([frame[position[c]].to_numpy(dtype=np.float64) for c in spec.numeric])
            if spec.numeric
            else np.empty((n, 0))
        )
        # a leaf whose rows share one value has sd 0: scipy's truncnorm then gives NaN, arfpy meant the value
        # itself; such draws fall back to the column's training mean only if scipy returns NaN
        if np.isnan(numeric).any():
            means = self.data.numeric.mean(axis=0)
            numeric = np.where(np.isnan(numeric), means[None, :], numeric)
        codes = (
            np.column_stack(
                [np.asarray(frame[position[c]].astype("int64"), dtype=np.int64) for c in spec.categorical]
            )
            if spec.categorical
            else np.empty((n, 0), dtype=np.int64)
        )
        return numeric, codes
