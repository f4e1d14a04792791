"""The `bronet:` section of params.yaml."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from stages.core.params import StrictModel
from stages.papers.fields import Seeds

Conv = Literal["bro", "cayley", "soc"]
LossName = Literal["la", "ce_cr"]


class LossParams(StrictModel):
    """LA (T, ξ, β, α; ξ is multiplied by √2 as in the LipConvNet code) and CE + CR (γ)."""

    temperature: float = Field(0.75, gt=0)
    offset: float = Field(2.0, ge=0, description="ξ (the code uses ξ·√2)")
    beta: float = Field(5.0, ge=0)
    alpha: float = Field(0.25, gt=0)
    gamma: float = Field(0.5, ge=0, description="CE + CR: weight of −mean ReLU(radius)")


class Optimiser(StrictModel):
    """SGD with momentum, learning rate ÷10 at 1/2 and 3/4 of the steps (the LipConvNet code's default)."""

    lr: float = Field(0.1, gt=0)
    momentum: float = Field(0.9, ge=0, lt=1)
    weight_decay: float = Field(3e-4, ge=0)
    batch: int = Field(128, ge=1)
    epochs: int = Field(3, ge=1)


class RankSweep(StrictModel):
    """BRO rank ratios on a net with equal-channel layers (LipConvNet-10: 2 blocks per stage), LA loss."""

    ranks: list[float] = Field(default_factory=lambda: [0.125, 0.25, 0.5], min_length=1)
    named: float = Field(0.5, gt=0, lt=1, description="the paper's advice r = m/2, tested against the best")
    blocks: int = Field(2, ge=2)
    seeds: Seeds = Field(default_factory=lambda: [0])


class Grid(StrictModel):
    """What one scale runs on Fashion-MNIST (padded to 32 × 32)."""

    train_size: int = Field(2000, ge=20, description="stratified from Fashion-MNIST's train split")
    test_size: int = Field(1000, ge=20, description="stratified from the test split (items are claim units)")
    width: int = Field(4, ge=2, description="LipConvNet-5-width: channels 2·width … 32·width")
    blocks: int = Field(1, ge=1)
    rank: float = Field(0.125, gt=0, lt=1, description="BRO rank (used only where c_in = c_out)")
    convs: list[Conv] = Field(default_factory=lambda: ["bro", "cayley", "soc"], min_length=1)
    losses: list[LossName] = Field(default_factory=lambda: ["la", "ce_cr"], min_length=1)
    seeds: Seeds = Field(default_factory=lambda: [0, 1])
    optimiser: Optimiser = Optimiser()
    rank_sweep: RankSweep = RankSweep()


class MnistParams(StrictModel):
    """MNIST-5k, one BRO dense layer 784 → 10 (the ICLR rebuttal's experiment)."""

    rank: float = Field(0.5, gt=0, lt=1)
    epochs: int = Field(10, ge=1)
    batch: int = Field(64, ge=1)
    lr: float = Field(1e-3, gt=0)
    seeds: Seeds = Field(default_factory=lambda: [0])


class LayerChecks(StrictModel):
    """Orthogonality, −1 eigenvalues, norm ratios, whole-net Lipschitz and activation memory per layer."""

    dense_sizes: list[int] = Field(default_factory=lambda: [16, 64, 256], min_length=1)
    conv_channels: list[int] = Field(default_factory=lambda: [8, 16, 32], min_length=1)
    conv_size: int = Field(8, ge=2)
    rank: float = Field(0.5, gt=0, lt=1)
    lipschitz_points: int = Field(4, ge=1)
    power_iterations: int = Field(30, ge=1)
    memory_widths: list[int] = Field(default_factory=lambda: [16, 32, 64], min_length=3)
    memory_batch: int = Field(128, ge=1)


class Timing(StrictModel):
    """Forward + backward time per layer type at equal widths (interleaved repeats)."""

    widths: list[int] = Field(default_factory=lambda: [16, 32, 64], min_length=3)
    size: int = Field(16, ge=4)
    batch: int = Field(32, ge=1)
    repeats: int = Field(5, ge=3)


class ClaimsParams(StrictModel):
    """Thresholds fixed before any run."""

    orthogonality_tol: float = 1e-5
    lipschitz_tol: float = 1e-4
    la_margin: float = Field(0.005, description="LA − CE+CR ≥ −margin (shares) at clean and 36/255")
    peer_margin: float = Field(0.01, description="BRO − peer ≥ −margin (shares)")
    rank_margin: float = Field(0.01, description="best rank − r = m/2 ≤ margin (shares)")
    cayley_band: float = Field(1.3, gt=1, description="BRO/Cayley time within [1/band, band]")
    mnist_clean: float = 0.85
    mnist_drop: float = 0.05
    attack_points: int = Field(200, ge=10)
    attack_steps: int = Field(20, ge=1)
    attack_power: float = Field(
        4.0,
        gt=1,
        description="the same PGD at this multiple of each radius must flip some points (its power)",
    )
    confidence: float = Field(0.95, gt=0, lt=1)


class BRONetParams(StrictModel):
    """Everything the BRONet pipeline reads."""

    scale: Literal["default", "full"] = "default"
    threads: int = Field(1, ge=1, description="torch threads of this paper's stages (small batched solves)")
    default: Grid = Grid()
    full: Grid = Grid(
        train_size=6000,
        test_size=2000,
        width=16,
        seeds=[0, 1, 2],
        optimiser=Optimiser(batch=512, epochs=4),
        rank_sweep=RankSweep(seeds=[0, 1, 2]),
    )
    loss: LossParams = LossParams()
    mnist: MnistParams = MnistParams()
    layers: LayerChecks = LayerChecks()
    timing: Timing = Timing()
    claims: ClaimsParams = ClaimsParams()

    @property
    def grid(self) -> Grid:
        """The grid of the chosen scale."""
        return self.full if self.scale == "full" else self.default

    @model_validator(mode="after")
    def _consistent(self) -> BRONetParams:
        for name, grid in (("default", self.default), ("full", self.full)):
            if len(set(grid.convs)) != len(grid.convs) or len(set(grid.losses)) != len(grid.losses):
                raise ValueError(f"{name}: convs and losses must not repeat")
            if grid.width % 2:
                raise ValueError(f"{name}.width: MaxMin pairs channels, the width must be even")
            if grid.rank_sweep.named not in grid.rank_sweep.ranks:
                raise ValueError(f"{name}.rank_sweep.named {grid.rank_sweep.named} must be one of ranks")
        return self
