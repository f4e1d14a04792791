"""The `dd3d:` section of params.yaml."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from stages.core.params import StrictModel
from stages.papers.fields import Seeds

Setting = Literal["aligned", "so3", "so3_rotator"]


class ShapesConfig(StrictModel):
    """The synthetic trimesh shapes (8 classes)."""

    train_per_class: int = Field(40, ge=2, description="the card: 80")
    test_per_class: int = Field(20, ge=1, description="the card: 40")
    points: int = Field(512, ge=16, description="surface points stored per cloud")
    rotation_seed: int = Field(0, ge=0, description="draws the SO(3) rotation of every cloud")


class Loops(StrictModel):
    """DD3D's outer/inner loop counts for one clouds-per-class budget."""

    outer: int = Field(ge=1)
    inner: int = Field(ge=0)
    iterations: int | None = Field(
        None,
        ge=1,
        description="fresh networks at this cpc (None: distill.iterations); cpc 10 costs ~7× cpc 1",
    )


class DistillConfig(StrictModel):
    """The distillation (gm_inr.py's knobs, CPU-sized)."""

    iterations: int = Field(40, ge=1, description="fresh networks (the card: 40; ModelNet40: 400)")
    batch_real: int = Field(8, ge=1, description="real clouds per class per matching step (the card: 16)")
    points: int = Field(64, ge=16, description="distillation resolution (the card: 256; ModelNet40: 1,024)")
    widths: list[int] = Field(default_factory=lambda: [32, 64, 128], min_length=1)
    loops: dict[int, Loops] = Field(
        default_factory=lambda: {1: Loops(outer=5, inner=5), 10: Loops(outer=10, inner=5, iterations=10)},
        description="cpc → outer/inner loops (ModelNet40: 5/5, 20/10, 40/5 for cpc 1, 10, 50)",
    )
    lr: float = Field(1e-3, gt=0)
    weight_decay: float = Field(5e-4, ge=0)
    lr_net: float = Field(1e-3, gt=0)
    hidden: int = Field(64, ge=4, description="SIREN width (the paper: 256)")
    layers: int = Field(2, ge=1)
    w0_first: float = Field(100.0, gt=0)
    w0_sign: float = Field(1.0, gt=0, description="the sign flip's w₀")


class EvalConfig(StrictModel):
    """A fresh PointNet trained on each set (the card: 200 epochs at paper scale)."""

    points: int = Field(128, ge=16, description="evaluation resolution (the card: 512)")
    epochs: int = Field(50, ge=1, description="the card: 100")
    batch: int = Field(256, ge=1)
    full_epochs: int = Field(10, ge=1, description="full data: epochs (batch `full_batch`)")
    full_batch: int = Field(32, ge=1)
    lr: float = Field(1e-3, gt=0)
    weight_decay: float = Field(5e-4, ge=0)
    lr_min: float = Field(1e-4, ge=0)
    check_every: int = Field(
        10, ge=1, description="test OA every k epochs for the reference's max over epochs"
    )


class Design(StrictModel):
    """Which runs the pipeline makes (per seed)."""

    settings: list[Setting] = Field(default_factory=lambda: ["aligned", "so3", "so3_rotator"], min_length=1)
    cpc: list[int] = Field(default_factory=lambda: [1, 10], min_length=1)
    many_cpc_settings: list[Setting] = Field(
        default_factory=lambda: ["so3_rotator"], description="settings distilled at cpc > 1"
    )
    dc_cpc: list[int] = Field(
        default_factory=lambda: [1], description="cpc at which fixed-xyz DC runs (so3_rotator)"
    )
    full_data_settings: list[Setting] = Field(default_factory=lambda: ["so3_rotator"])
    cross_resolution_points: int | None = Field(
        128, ge=16, description="also distil cpc 1 so3_rotator at this resolution (None: skip)"
    )
    curve: list[int] = Field(
        default_factory=lambda: [5, 10, 20],
        description="iterations (below distill.iterations) at which the so3_rotator cpc 1 DD3D and DC sets are "
        "also evaluated: OA vs iterations",
    )
    long_iterations: int | None = Field(
        400,
        ge=1,
        description="also distil DD3D so3_rotator cpc 1 this long for the first seed (None: skip), evaluated at "
        "`long_curve` and at the end: does the default's count cap DD3D?",
    )
    long_curve: list[int] = Field(default_factory=lambda: [40, 100, 200])
    workers: int = Field(2, ge=1, description="processes running runs side by side (1 torch thread each)")


class ClaimsParams(StrictModel):
    """Thresholds fixed before any run (percentage points of OA)."""

    margin_cpc1: float = Field(5.0, description="DD3D − random subset at cpc 1, in points")
    margin_many: float = Field(0.0, description="DD3D − random subset at cpc > 1")
    margin_dc: float = Field(0.0, description="DD3D − fixed-xyz DC")
    rotator_gain: float = Field(10.0, description="with − without the rotator on SO(3) data at cpc 1")
    rotator_gap: float = Field(5.0, description="aligned − SO(3)+rotator at most this")
    resolution_gap: float = Field(3.0, description="(high→high) − (low→high) at most this")
    chamfer: float = Field(1e-3, gt=0)
    eigengap: float = Field(0.1, gt=0, lt=1, description="clouds whose relative eigengaps all exceed this")
    confidence: float = Field(0.95, gt=0, lt=1)
    operating_iterations: int = Field(
        400,
        ge=1,
        description="the paper's distillation iterations: below them, DD3D falling short of a peer is a failure "
        "only if the long run (design.long_iterations ≥ this) falls short too; otherwise inconclusive",
    )


class Grid(StrictModel):
    """What one scale runs: the data, the distillation, the evaluation and the design."""

    seeds: Seeds = Field(default_factory=lambda: [0, 1, 2])
    shapes: ShapesConfig = ShapesConfig()
    distill: DistillConfig = DistillConfig()
    evaluation: EvalConfig = EvalConfig()
    design: Design = Design()


FULL = Grid(
    shapes=ShapesConfig(train_per_class=80, test_per_class=40, points=1024),
    distill=DistillConfig(
        iterations=400,
        batch_real=32,
        points=512,
        widths=[64, 128, 1024],
        loops={1: Loops(outer=5, inner=5), 10: Loops(outer=20, inner=10), 50: Loops(outer=40, inner=5)},
        hidden=256,
    ),
    evaluation=EvalConfig(points=1024, epochs=200, full_epochs=200, check_every=1),
    design=Design(
        cpc=[1, 10, 50],
        dc_cpc=[1, 10, 50],
        cross_resolution_points=1024,
        curve=[50, 100, 200],
        long_iterations=None,
    ),
)
"""The paper's grid (ModelNet40's constants on the card's shapes at the card's 80 / 40 clouds per class)."""


class DD3DParams(StrictModel):
    """Everything the DD3D pipeline reads."""

    scale: Literal["default", "full"] = "default"
    default: Grid = Grid()
    full: Grid = FULL
    claims: ClaimsParams = ClaimsParams()

    @property
    def grid(self) -> Grid:
        """The grid of the chosen scale."""
        return self.full if self.scale == "full" else self.default

    @model_validator(mode="after")
    def _consistent(self) -> DD3DParams:
        for name, grid in (("default", self.default), ("full", self.full)):
            _check_grid(name, grid)
        return self


def _check_grid(name: str, grid: Grid) -> None:
    """Errors name the key in full (`default.distill.points`, `full.design.cpc`, ...)."""
    missing = [cpc for cpc in grid.design.cpc if cpc not in grid.distill.loops]
    if missing:
        raise ValueError(f"{name}.distill.loops: no outer/inner loops for cpc {missing}")
    if any(cpc < 1 for cpc in grid.design.cpc):
        raise ValueError(f"{name}.design.cpc: clouds per class must be ≥ 1")
    if max(grid.design.cpc) > grid.shapes.train_per_class:
        raise ValueError(
            f"{name}.design.cpc: more clouds per class than {name}.shapes.train_per_class (random subset)"
        )
    for key, value in (
        ("distill.points", grid.distill.points),
        ("evaluation.points", grid.evaluation.points),
        ("design.cross_resolution_points", grid.design.cross_resolution_points or 0),
    ):
        if value > grid.shapes.points:
            raise ValueError(f"{name}.{key}: {value} exceeds {name}.shapes.points ({grid.shapes.points})")
    if not set(grid.design.dc_cpc) <= set(grid.design.cpc):
        raise ValueError(f"{name}.design.dc_cpc: every entry must be in {name}.design.cpc")
    if not set(grid.design.many_cpc_settings) <= set(grid.design.settings):
        raise ValueError(f"{name}.design.many_cpc_settings: every entry must be in {name}.design.settings")
    if any(not 0 < it < grid.distill.iterations for it in grid.design.curve):
        raise ValueError(f"{name}.design.curve: every entry must lie in (0, {name}.distill.iterations)")
    long = grid.design.long_iterations
    if long is not None and any(not 0 < it < long for it in grid.design.long_curve):
        raise ValueError(
            f"{name}.design.long_curve: every entry must lie in (0, {name}.design.long_iterations)"
        )
    if "so3_rotator" not in grid.design.settings:
        raise ValueError(f"{name}.design.settings: the claims need so3_rotator")
