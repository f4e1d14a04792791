"""The `vanishing_ideals:` section of params.yaml."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from stages.core.params import StrictModel
from stages.papers.fields import Seeds


class BaseNet(StrictModel):
    """The "pretrained" CIFAR-style ResNet trained here on Fashion-MNIST (the default: a subset, few epochs)."""

    widths: list[int] = Field(default_factory=lambda: [16, 32, 64], min_length=1)
    blocks: int = Field(2, ge=1, description="basic blocks per stage")
    image_side: Literal[14, 28] = Field(14, description="28: the images as they are; 14: 2×2 average-pooled")
    train_images: int = Field(8000, ge=20, description="training images (stratified from the train split)")
    validation_images: int = Field(
        2000, ge=20, description="held out of the train split: ψ is chosen on them"
    )
    test_images: int | None = Field(5000, ge=20, description="test images (stratified; None: all 10,000)")
    epochs: int = Field(4, ge=1)
    batch_size: int = Field(128, ge=1)
    lr: float = Field(0.05, gt=0, description="SGD (momentum 0.9, weight decay 5e-4), cosine to 0")

    @property
    def n_convs(self) -> int:
        """3×3 convolutions: the stem and two per block."""
        return 1 + 2 * self.blocks * len(self.widths)

    def channels_at(self, cut: int) -> int:
        """Channels of the feature map after convolution `cut`."""
        return self.widths[0] if cut == 1 else self.widths[(cut - 2) // 2 // self.blocks]


class Fit(StrictModel):
    """Per cut: PCA, the vanishing-ideal fit, pruning and the head recipe (shared by every head)."""

    cuts: list[int] = Field(default_factory=lambda: [7, 9, 11, 12], min_length=1)
    pca_components: int = Field(12, ge=1)
    oracle: Literal["abm", "oavi"] = "abm"
    psi_grid: list[float] = Field(default_factory=lambda: [0.002, 0.006, 0.02], min_length=1)
    max_degree: int = Field(3, ge=1)
    max_points: int = Field(1000, ge=2, description="points per class the generators are fitted on")
    keep: int = Field(20, ge=1, description="generators kept per class (highest s(p))")
    head_epochs: int = Field(3, ge=1)
    head_batch: int = Field(128, ge=1)
    head_lr: float = Field(0.01, gt=0)
    seeds: Seeds = Field(default_factory=lambda: [0, 1, 2], description="point draws, head orders, monomials")


class Timing(StrictModel):
    """Throughput: images per second at a batch size, median of interleaved repeats."""

    batch_size: int = Field(256, ge=1)
    batches: int = Field(4, ge=1, description="batches of test images per timed call")
    repeats: int = Field(5, ge=3)


class Grid(StrictModel):
    """What one scale runs: the base network and its data, the cuts and fits, the throughput sizes."""

    base: BaseNet = BaseNet()
    fit: Fit = Fit()
    headline_cut: int = Field(
        9, ge=1, description="the cut the headline claims are judged at (the paper's Small; one of fit.cuts)"
    )
    timing: Timing = Timing()


class ClaimsParams(StrictModel):
    """Thresholds fixed before any run."""

    accuracy_margin: float = Field(1.5, ge=0, description="points VI-Net may trail the full net (headline)")
    params_fraction: float = Field(0.5, gt=0, le=1, description="VI-Net's parameters ≤ this × the full net's")
    confidence: float = Field(0.95, gt=0, lt=1)


class VanishingIdealsParams(StrictModel):
    """Everything the VI-Net pipeline reads."""

    dataset: Literal["fashion_mnist"] = "fashion_mnist"
    scale: Literal["default", "full"] = "default"
    default: Grid = Grid()
    full: Grid = Grid(
        base=BaseNet(
            widths=[64, 128, 256, 512],
            blocks=2,
            image_side=28,
            train_images=55000,
            validation_images=5000,
            test_images=None,
            epochs=30,
        ),
        fit=Fit(
            cuts=[9, 12, 14, 16],
            psi_grid=[0.0005, 0.001, 0.002, 0.006, 0.02],
            seeds=[0, 1, 2, 3, 4],
        ),
        headline_cut=12,
        timing=Timing(batches=39),
    )
    claims: ClaimsParams = ClaimsParams()

    @property
    def grid(self) -> Grid:
        """The grid of the chosen scale."""
        return self.full if self.scale == "full" else self.default

    @model_validator(mode="after")
    def _consistent(self) -> VanishingIdealsParams:
        for name, grid in (("default", self.default), ("full", self.full)):
            base, fit = grid.base, grid.fit
            bad = [cut for cut in fit.cuts if not 1 <= cut <= base.n_convs]
            if bad:
                raise ValueError(
                    f"{name}.fit.cuts: {bad} outside the network's convolutions 1..{base.n_convs}"
                )
            if fit.cuts != sorted(set(fit.cuts)):
                raise ValueError(f"{name}.fit.cuts: must be increasing and distinct, got {fit.cuts}")
            if grid.headline_cut not in fit.cuts:
                raise ValueError(
                    f"{name}.headline_cut: {grid.headline_cut} is not one of {name}.fit.cuts {fit.cuts}"
                )
            narrow = {cut: base.channels_at(cut) for cut in fit.cuts}
            if any(fit.pca_components > channels for channels in narrow.values()):
                raise ValueError(
                    f"{name}.fit.pca_components: {fit.pca_components} exceeds a cut's channels {narrow}"
                )
            if any(psi <= 0 for psi in fit.psi_grid):
                raise ValueError(f"{name}.fit.psi_grid: every ψ must be > 0, got {fit.psi_grid}")
        return self
