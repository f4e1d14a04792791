"""The `blae:` section of params.yaml."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, model_validator

from stages.core.params import StrictModel
from stages.methods.bandits.registry import ALGORITHMS
from stages.papers.fields import Seeds

ArmDistribution = Literal["uniform", "gaussian", "e4_code"]


class Cell(StrictModel):
    """One experimental cell: arm distribution, K arms in d dimensions."""

    arms: ArmDistribution = "uniform"
    n_arms: int = Field(ge=2, description="K (≥ 2)")
    dim: int = Field(ge=1, description="d (≥ 1)")

    @property
    def label(self) -> str:
        return f"{self.arms}_K{self.n_arms}_d{self.dim}"

    @property
    def large_k(self) -> bool:
        """The paper's large-K regime, K > e^d."""
        return self.n_arms > math.exp(self.dim)


class AlgorithmParams(StrictModel):
    """A registered bandit algorithm and its options."""

    algorithm: str
    options: dict[str, Any] = Field(default_factory=dict)


class Grid(StrictModel):
    """Cells, horizon and seeds of one scale."""

    horizon: int = Field(20_000, ge=1, description="T")
    cells: list[Cell] = Field(min_length=1)
    seeds: Seeds = Field(default_factory=lambda: [0, 1, 2, 3, 4])
    e4_max_arms: int | None = Field(
        None,
        ge=2,
        description="run E4 only in cells with K ≤ this (its SDP: ~1–5 s per run at K = 200); null: all",
    )


def _paper_cells() -> list[Cell]:
    return [
        Cell(arms=arms, n_arms=k, dim=d)
        for arms in ("uniform", "gaussian")
        for d in (5, 10)
        for k in (50, 100, 200, 400)
    ]


class HorizonsParams(StrictModel):
    """Batches vs T: one cell, several horizons."""

    horizons: list[int] = Field(default_factory=lambda: [1_000, 10_000, 100_000], min_length=1)
    cell: Cell = Cell(n_arms=50, dim=5)
    seeds: Seeds = Field(default_factory=lambda: [0, 1, 2])
    algorithms: list[str] = Field(default_factory=lambda: ["blae", "phaelimd", "e4", "rs_oful"], min_length=1)


class ClaimsParams(StrictModel):
    """Thresholds fixed before any run."""

    method: str = "blae"
    reference: str = "e4"
    cheap_baseline: str = "phaelimd"
    runtime_ratio: float = Field(3.0, gt=0, description="BLAE wall time ≤ this × PhaElimD's (our bound)")
    timing_repeats: int = Field(
        3, ge=1, description="interleaved timed repeats of each compared run (blae-timing takes their median)"
    )
    unbatched: list[str] = Field(
        default_factory=lambda: ["linucb"], description="references outside the claims"
    )
    log_k_baselines: list[str] = Field(
        default_factory=lambda: ["e4", "phaelimd"],
        description="baselines whose regret bounds carry √log K (compared in the large-K regime claim)",
    )
    confidence: float = Field(0.95, gt=0, lt=1)


class BLAEParams(StrictModel):
    """Everything the BLAE pipeline reads."""

    scale: Literal["default", "full"] = "default"
    default: Grid = Grid(
        cells=[
            Cell(n_arms=50, dim=5),
            Cell(n_arms=200, dim=5),
            Cell(n_arms=50, dim=10),
            Cell(n_arms=200, dim=10),
            Cell(arms="gaussian", n_arms=50, dim=5),
        ],
    )
    full: Grid = Grid(horizon=100_000, cells=_paper_cells(), seeds=list(range(10)))
    noise_sd: float = Field(1.0, ge=0, description="σ of the Gaussian reward noise")
    algorithms: dict[str, AlgorithmParams]
    curve_points: int = Field(100, ge=2, description="points kept per cumulative-regret curve")
    horizons: HorizonsParams = HorizonsParams()
    claims: ClaimsParams = ClaimsParams()

    @property
    def grid(self) -> Grid:
        """The grid of the chosen scale."""
        return self.full if self.scale == "full" else self.default

    @model_validator(mode="after")
    def _known(self) -> BLAEParams:
        for label, entry in self.algorithms.items():
            try:
                ALGORITHMS.build(entry.algorithm, entry.options, key=f"blae.algorithms.{label}.options")
            except Exception as error:  # re-raised as a validation error naming the key
                raise ValueError(f"algorithms.{label}: {error}") from None
        named = [
            self.claims.method,
            self.claims.reference,
            self.claims.cheap_baseline,
            *self.horizons.algorithms,
            *self.claims.log_k_baselines,
        ]
        missing = sorted({label for label in named if label not in self.algorithms})
        if missing:
            raise ValueError(
                f"claims/horizons name algorithms that are not in blae.algorithms: {', '.join(missing)}"
            )
        return self
