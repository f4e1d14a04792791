"""Library peers from SDV 1.x: Gaussian copula, CTGAN and TVAE, behind the same interface.

SDV sees numeric columns as floats and categorical ones as string codes (so SDV never guesses a type);
its output comes back through the table's own decoding. SDV draws from NumPy's and torch's global
generators, so `fit` and `sample` seed both from the caller's `rng` (same rng → same table). SDV is
imported only when a peer is fitted.
"""

from __future__ import annotations

import random
import warnings

import numpy as np
import polars as pl
from pydantic import Field

from stages.core.params import StrictModel
from stages.methods.tabular.base import Synthesizer


def _seed_globals(rng: np.random.Generator) -> None:
    import torch

    seed = int(rng.integers(2**31 - 1))
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class SDVPeer(Synthesizer):
    """Common plumbing: the SDV frame, metadata, seeded fit and sample."""

    def _frame(self):
        import pandas as pd

        data = self.data
        columns = {column: data.numeric[:, j] for j, column in enumerate(data.spec.numeric)}
        for j, column in enumerate(data.spec.categorical):
            columns[column] = [f"c{code}" for code in data.codes[:, j]]
        return pd.DataFrame({column: columns[column] for column in data.spec.columns})

    def _metadata(self):
        from sdv.metadata import SingleTableMetadata

        metadata = SingleTableMetadata()
        for column in self.data.spec.columns:
            sdtype = "categorical" if column in self.data.spec.categorical else "numerical"
            metadata.add_column(column, sdtype=sdtype)
        return metadata

    def _build(self, metadata):
        raise NotImplementedError

    def _fit(self, rng: np.random.Generator) -> None:
        _seed_globals(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.model = self._build(self._metadata())
            self.model.fit(self._frame())

    def _sample_arrays(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        _seed_globals(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.model.reset_sampling()
            frame = pl.from_pandas(self.model.sample(num_rows=n))
        spec = self.data.spec
        numeric = (
            np.column_stack([frame[column].cast(pl.Float64).to_numpy() for column in spec.numeric])
            if spec.numeric
            else np.empty((n, 0))
        )
        codes = (
            np.column_stack(
                [frame[column].str.slice(1).cast(pl.Int64).to_numpy() for column in spec.categorical]
            )
            if spec.categorical
            else np.empty((n, 0), dtype=np.int64)
        )
        return numeric, codes


class GaussianCopula(SDVPeer):
    """SDV's GaussianCopulaSynthesizer (marginals fitted per column, a Gaussian copula joining them)."""

    name = "gaussian_copula"

    class Options(StrictModel):
        default_distribution: str = Field("beta", description="SDV's marginal family for numeric columns")

    def _build(self, metadata):
        from sdv.single_table import GaussianCopulaSynthesizer

        return GaussianCopulaSynthesizer(metadata, default_distribution=self.options.default_distribution)


class DeepOptions(StrictModel):
    epochs: int = Field(300, ge=1, description="training epochs (SDV default 300)")
    batch_size: int | None = Field(
        None,
        ge=10,
        description="rows per batch (CTGAN: a multiple of pac = 10); None: from `steps_per_epoch` (SDV's "
        "default 500 is one gradient step per epoch on tables of ≤ 500 rows)",
    )
    steps_per_epoch: int = Field(
        4, ge=1, description="with batch_size None: batch = ⌊rows / steps⌋ (CTGAN: down to a multiple of 10)"
    )


def deep_batch(options: DeepOptions, rows: int, multiple: int = 1) -> int:
    """The batch size of a deep peer on a table of `rows` rows: `batch_size`, or ⌊rows / steps_per_epoch⌋,
    rounded down to `multiple` (CTGAN's pac), at least `multiple` (and 10 for CTGAN)."""
    batch = options.batch_size if options.batch_size is not None else rows // options.steps_per_epoch
    return max(multiple, 10 if multiple > 1 else 1, batch // multiple * multiple)


def gradient_steps(epochs: int, batch: int, rows: int, ctgan: bool) -> int:
    """Gradient steps of a training run: CTGAN takes ⌊rows / batch⌋ (at least 1) per epoch, TVAE ⌈rows / batch⌉."""
    per_epoch = max(rows // batch, 1) if ctgan else -(-rows // batch)
    return epochs * per_epoch


class CTGAN(SDVPeer):
    """SDV's CTGANSynthesizer (conditional GAN with mode-specific normalisation)."""

    name = "ctgan"
    Options = DeepOptions

    def _build(self, metadata):
        from sdv.single_table import CTGANSynthesizer

        batch = deep_batch(self.options, self.data.n_rows, multiple=10)
        return CTGANSynthesizer(metadata, epochs=self.options.epochs, batch_size=batch, cuda=False)


class TVAE(SDVPeer):
    """SDV's TVAESynthesizer (a variational autoencoder for tables)."""

    name = "tvae"
    Options = DeepOptions

    def _build(self, metadata):
        from sdv.single_table import TVAESynthesizer

        batch = deep_batch(self.options, self.data.n_rows)
        return TVAESynthesizer(metadata, epochs=self.options.epochs, batch_size=batch, cuda=False)
