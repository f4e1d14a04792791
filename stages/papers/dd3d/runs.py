"""The runs of the design (per seed) and the arrays the distil and evaluate steps share."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from stages.datasets.point_clouds import from_table
from stages.papers.dd3d.params import DD3DParams

ROTATOR = "so3_rotator"
LONG = "dd3d_long"
"""DD3D at the paper's iteration count (so3_rotator, cpc 1, first seed): does the default's count cap it?"""


@dataclass(frozen=True)
class Run:
    """One set to build and evaluate: method (dd3d, dd3d_long, dc_xyz, random, full), setting, clouds per class
    (0: all), the distillation resolution (0: not distilled), its iterations (0: not distilled) and the
    iterations (below those) at which it is also evaluated."""

    method: str
    setting: str
    cpc: int
    distil_points: int
    iterations: int = 0
    curve: tuple[int, ...] = ()
    first_seed_only: bool = False

    @property
    def label(self) -> str:
        """A short name: `dd3d/so3_rotator/cpc1@128`."""
        tail = f"@{self.distil_points}" if self.distil_points else ""
        return f"{self.method}/{self.setting}/cpc{self.cpc}{tail}"

    @property
    def distilled(self) -> bool:
        return self.method in ("dd3d", LONG, "dc_xyz")

    @property
    def generator(self) -> bool:
        """Synthesised by the SIREN generator (else by coordinates)."""
        return self.method in ("dd3d", LONG)


def planned_runs(params: DD3DParams) -> list[Run]:
    """Every run of the design, in a fixed order."""
    design, low = params.grid.design, params.grid.distill.points
    long = design.long_iterations
    runs = [Run(LONG, ROTATOR, 1, low, long, tuple(design.long_curve), True)] if long else []
    for cpc in design.cpc:
        its = iterations(params, cpc)
        curve = tuple(design.curve) if cpc == 1 else ()
        settings = design.settings if cpc == 1 else design.many_cpc_settings
        for setting in settings:
            runs.append(Run("dd3d", setting, cpc, low, its, curve if setting == ROTATOR else ()))
            runs.append(Run("random", setting, cpc, 0))
        if cpc in design.dc_cpc:
            runs.append(Run("dc_xyz", ROTATOR, cpc, low, its, curve))
    high = design.cross_resolution_points
    if high is not None and high != low:
        runs.append(Run("dd3d", ROTATOR, 1, high, iterations(params, 1)))
    runs.extend(Run("full", setting, 0, 0) for setting in design.full_data_settings)
    return runs


def iterations(params: DD3DParams, cpc: int) -> int:
    """The distillation iterations at `cpc` (its loops' override, else distill.iterations)."""
    config = params.grid.distill
    return config.loops[cpc].iterations or config.iterations


def setting_arrays(table: pl.DataFrame, setting: str, split: str) -> tuple[np.ndarray, np.ndarray]:
    """Clouds and labels of one setting and split, in sample_id order."""
    rows = table.filter((pl.col("setting") == setting) & (pl.col("split") == split)).sort("sample_id")
    return from_table(rows)


def subsample(clouds: np.ndarray, points: int, seed: int) -> np.ndarray:
    """The same `points` random points of every cloud (a fixed seeded choice; all when points ≥ n)."""
    if points >= clouds.shape[1]:
        return clouds
    keep = np.sort(np.random.default_rng(seed).permutation(clouds.shape[1])[:points])
    return np.ascontiguousarray(clouds[:, keep])
