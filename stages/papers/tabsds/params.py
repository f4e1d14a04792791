"""The `tabsds:` section of params.yaml."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from stages.core.params import StrictModel
from stages.methods.tabular.metrics import MetricOptions
from stages.methods.tabular.registry import SYNTHESIZERS
from stages.papers.fields import Seeds, check_choices
from stages.papers.tabsds.data import SOURCES


class SynthesizerParams(StrictModel):
    """A registered synthesizer and its options."""

    synthesizer: str
    options: dict[str, Any] = Field(default_factory=dict)


class Grid(StrictModel):
    """Datasets, seeds and the n_c sweep of one scale."""

    datasets: list[str] = Field(min_length=1)
    seeds: Seeds = Field(default_factory=lambda: [0, 1, 2])
    max_rows: int | None = Field(
        None, ge=4, description="rows drawn from each table before the split (None: all)"
    )
    n_levels: list[int] = Field(default_factory=lambda: [5, 10, 20, 50, 100, 200, 500], min_length=3)
    deep_epochs: int = Field(300, ge=1, description="epochs of every synthesizer that has an `epochs` option")
    labels: list[str] | None = Field(None, description="synthesizer labels run at this scale (None: all)")

    @field_validator("datasets")
    @classmethod
    def _distinct(cls, datasets: list[str]) -> list[str]:
        if len(set(datasets)) != len(datasets):
            raise ValueError(f"repeated datasets in {datasets}")
        return datasets


class OwnTable(StrictModel):
    """A user's Parquet/CSV table run through the pipeline like the built-in sets (a DVC dep of prepare)."""

    path: str = Field(min_length=1)
    target: str = Field(min_length=1, description="the column predicted for the utility metric")
    categorical: list[str] = Field(default_factory=list, description="numeric columns to treat as categories")
    id_columns: list[str] = Field(
        default_factory=list, description="row-id columns left out (an undeclared id-like column is an error)"
    )


class ClaimsParams(StrictModel):
    """Thresholds fixed before any run."""

    method: str = Field("tabsds", description="the label judged (TabSDS at its fixed n_c)")
    deep: list[str] = Field(default_factory=lambda: ["ctgan", "tvae"], min_length=1)
    speed_ratio: float = Field(
        10.0, gt=1, description="TabSDS at least this many times faster than each deep peer"
    )
    arf_label: str = Field(
        "arf", description="the paper's ARF peer (speed: TabSDS faster; reported missing when not run)"
    )
    competitive_share: float = Field(
        2 / 3, gt=0, le=1, description="share of datasets where TabSDS must match"
    )
    confidence: float = Field(0.95, gt=0, lt=1)


class TabSDSParams(StrictModel):
    """Everything the TabSDS pipeline reads."""

    scale: Literal["default", "full"] = "default"
    default: Grid = Grid(
        datasets=["wine", "diabetes", "fair"], seeds=[0, 1, 2, 3, 4], max_rows=800, deep_epochs=100
    )
    full: Grid = Grid(datasets=["wine", "diabetes", "fair", "breast_cancer"], seeds=list(range(10)))
    test_fraction: float = Field(0.5, gt=0, lt=1, description="held-out share of each table (the paper: 1/2)")
    split_seed: int = Field(123, ge=0, description="the split's seed (the paper's)")
    own_tables: dict[str, OwnTable] = Field(
        default_factory=dict, description="your tables by name; list a name in <scale>.datasets to run it"
    )
    synthesizers: dict[str, SynthesizerParams] = Field(min_length=1)
    sweep: str = Field("tabsds", description="the synthesizer label whose n_levels the sweep varies")
    metrics: MetricOptions = MetricOptions(trees=50, folds=3)
    samples_kept: list[str] = Field(
        default_factory=lambda: ["tabsds", "gaussian_copula", "ctgan", "tvae", "arf"],
        description="labels whose first-seed synthetic tables are kept for the marginal figures",
    )
    claims: ClaimsParams = ClaimsParams()

    @property
    def grid(self) -> Grid:
        """The grid of the chosen scale."""
        return self.full if self.scale == "full" else self.default

    @model_validator(mode="after")
    def _consistent(self) -> TabSDSParams:
        check_choices(self.synthesizers, SYNTHESIZERS, "synthesizer", "tabsds.synthesizers")
        clash = sorted(set(self.own_tables) & set(SOURCES))
        if clash:
            raise ValueError(f"own_tables: names {clash} clash with built-in datasets")
        for scale, grid in (("default", self.default), ("full", self.full)):
            unknown = [name for name in grid.datasets if name not in SOURCES and name not in self.own_tables]
            if unknown:
                known = ", ".join([*SOURCES, *self.own_tables])
                raise ValueError(f"{scale}.datasets: unknown {unknown}; known: {known}")
        named = [self.sweep, self.claims.method, *self.claims.deep, *self.samples_kept]
        for grid in (self.default, self.full):
            named += grid.labels or []
        missing = sorted({label for label in named if label not in self.synthesizers})
        if missing:
            raise ValueError(
                f"sweep/claims/samples_kept name labels not in tabsds.synthesizers: {', '.join(missing)}"
            )
        if self.synthesizers[self.sweep].synthesizer not in ("tabsds", "tabsjppds"):
            raise ValueError(f"sweep: {self.sweep!r} is not a TabSDS/TabSJPPDS synthesizer (no n_levels)")
        run = self.labels
        absent = [label for label in (self.sweep, self.claims.method, *self.claims.deep) if label not in run]
        if absent:
            raise ValueError(
                f"{self.scale}.labels leaves out labels the sweep or claims need: {', '.join(absent)}"
            )
        return self

    @property
    def labels(self) -> list[str]:
        """The synthesizer labels run at the chosen scale."""
        return self.grid.labels if self.grid.labels is not None else list(self.synthesizers)
