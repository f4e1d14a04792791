"""The array synthesizers: TabSDS, its TabSJPPDS ablation and two cheap peers (SMOTE-style interpolation,
additive noise). The library peers (SDV) are in `sdv_peers`."""

from __future__ import annotations

import math

import numpy as np
from pydantic import Field

from stages.core.params import StrictModel
from stages.methods.tabular.base import Synthesizer
from stages.methods.tabular.tabsds import synthesize_arrays


class TabSDS(Synthesizer):
    """TabSDS: IOS marginals, SJPPDS joint structure, rank matching; categories as code blocks.

    `sample(rng)` returns exactly the training row count (every category keeps its count). Another `n` (our
    extension): ⌈n / n_train⌉ independent syntheses, rows shuffled together, the first n kept.
    """

    name = "tabsds"
    use_ios = True

    class Options(StrictModel):
        n_levels: int = Field(30, ge=1, description="n_c: equal-width bins per column in each shuffle round")
        proportion: float = Field(0.5, gt=0, le=0.5, description="p: IOS subset size ⌊n·p⌋ (≤ 1/2: disjoint)")

    def _sample_arrays(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        data, options = self.data, self.options
        runs = [
            synthesize_arrays(
                data.numeric, data.codes, options.n_levels, options.proportion, rng, self.use_ios
            )
            for _ in range(math.ceil(n / data.n_rows))
        ]
        numeric = np.concatenate([run[0] for run in runs])
        codes = np.concatenate([run[1] for run in runs])
        if len(runs) == 1 and n == data.n_rows:
            return numeric, codes
        keep = rng.permutation(len(numeric))[:n]
        return numeric[keep], codes[keep]


class TabSJPPDS(TabSDS):
    """The ablation without IOS: numeric columns are the original values at the shuffled ranks."""

    name = "tabsjppds"
    use_ios = False

    class Options(StrictModel):
        n_levels: int = Field(30, ge=1, description="n_c: equal-width bins per column in each shuffle round")
        proportion: float = Field(0.5, gt=0, le=0.5, description="unused (no IOS); kept for a shared grid")


def one_hot(codes: np.ndarray, levels_per_column: list[int]) -> np.ndarray:
    """One-hot columns of category codes (n × Σ levels)."""
    blocks = [np.eye(count)[codes[:, j]] for j, count in enumerate(levels_per_column)]
    return np.column_stack(blocks) if blocks else np.empty((len(codes), 0))


class SMOTEInterpolation(Synthesizer):
    """SMOTE-style: a random training row, one of its k nearest neighbours (standardized numeric columns,
    one-hot categories), a uniform point on the segment between them; each category is the row's or the
    neighbour's, the neighbour's with probability equal to the interpolation weight."""

    name = "smote"

    class Options(StrictModel):
        k: int = Field(5, ge=1, description="neighbours to interpolate towards")

    def _fit(self, rng: np.random.Generator) -> None:
        from sklearn.neighbors import (
            NearestNeighbors,
        )  # k-d tree: exact distances, so ties break the same way

        data = self.data
        scale = data.numeric.std(axis=0)
        scale[scale == 0] = 1.0
        levels = [len(data.levels[column]) for column in data.spec.categorical]
        space = np.column_stack([data.numeric / scale, one_hot(data.codes, levels)])
        k = min(self.options.k, data.n_rows - 1)
        _, neighbours = NearestNeighbors(n_neighbors=k + 1, algorithm="kd_tree").fit(space).kneighbors(space)
        self.neighbours = neighbours[:, 1:]

    def _sample_arrays(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        data = self.data
        rows = rng.integers(data.n_rows, size=n)
        partners = self.neighbours[rows, rng.integers(self.neighbours.shape[1], size=n)]
        weight = rng.random(n)
        numeric = data.numeric[rows] + weight[:, None] * (data.numeric[partners] - data.numeric[rows])
        take_partner = rng.random((n, data.codes.shape[1])) < weight[:, None]
        codes = np.where(take_partner, data.codes[partners], data.codes[rows])
        return numeric, codes


class AdditiveNoise(Synthesizer):
    """The training rows with independent Gaussian noise on each numeric column (sd = `noise` × the column's
    sd); categories unchanged. Other sizes: rows drawn with replacement (our extension)."""

    name = "additive_noise"

    class Options(StrictModel):
        noise: float = Field(0.1, ge=0, description="noise sd as a fraction of each column's sd")

    def _sample_arrays(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        data = self.data
        rows = np.arange(n) if n == data.n_rows else rng.integers(data.n_rows, size=n)
        sd = self.options.noise * data.numeric.std(axis=0)
        return data.numeric[rows] + rng.normal(size=(n, data.numeric.shape[1])) * sd, data.codes[rows]
