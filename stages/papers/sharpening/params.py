"""The `sharpening:` section of params.yaml (defaults: the CPU-scale reproduction; `scale: full` swaps in the
paper-scale values of `full:`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from stages.core.params import StrictModel
from stages.papers.fields import DatasetName, Seeds


class SweepParams(StrictModel):
    """One sweep of the minimalist model: the grid product of its lists.

    Step sizes are given either as `ratio` (Ŝ_D/(2/η): η = 2·ratio/Ŝ_D of each run's own data, < 1 below the
    edge of stability, > 1 above it) or as absolute `eta`. `batch_size: null` is GD (B = N).
    """

    data: Literal["real", "synthetic"] = "real"
    n: list[int] = Field(default_factory=lambda: [100], min_length=1)
    difficulty: list[float] = Field(default_factory=lambda: [1.0], min_length=1)
    depth: list[int] = Field(default_factory=lambda: [2], min_length=1)
    batch_size: list[int | None] = Field(default_factory=lambda: [None], min_length=1)
    ratio: list[float] | None = None
    eta: list[float] | None = None

    @field_validator("depth")
    @classmethod
    def _depths(cls, depths: list[int]) -> list[int]:
        if any(depth < 1 for depth in depths):
            raise ValueError(f"depth {depths}: the depth D must be ≥ 1 (D counts u)")
        return depths

    @field_validator("n")
    @classmethod
    def _sizes(cls, sizes: list[int]) -> list[int]:
        if any(size < 2 for size in sizes):
            raise ValueError(f"n {sizes}: a subset needs at least 2 samples")
        return sizes

    @field_validator("difficulty")
    @classmethod
    def _difficulties(cls, values: list[float]) -> list[float]:
        if any(value <= 0 for value in values):
            raise ValueError(f"difficulty {values}: Q = ‖X⁺y‖² must be > 0")
        return values

    @field_validator("ratio")
    @classmethod
    def _ratios(cls, ratios: list[float] | None) -> list[float] | None:
        if ratios is not None and (not ratios or any(ratio <= 0 for ratio in ratios)):
            raise ValueError(f"ratio {ratios}: Ŝ_D/(2/η) must be > 0 (η > 0)")
        return ratios

    @field_validator("eta")
    @classmethod
    def _etas(cls, etas: list[float] | None) -> list[float] | None:
        if etas is not None and (not etas or any(eta <= 0 for eta in etas)):
            raise ValueError(f"eta {etas}: the step size η must be > 0")
        return etas

    @model_validator(mode="after")
    def _one_step_rule(self) -> SweepParams:
        if (self.ratio is None) == (self.eta is None):
            raise ValueError("give exactly one of ratio (η relative to Ŝ_D) and eta (absolute step sizes)")
        return self


class SyntheticParams(StrictModel):
    """Gaussian-orthogonal X (N × dim) with singular values geometric from 1 to 1/√condition, ±1 labels,
    scaled so that Q = ‖X⁺y‖² equals each sweep's `difficulty`."""

    n: int = Field(50, ge=2)
    dim: int = Field(100, ge=2)
    condition: float = Field(100.0, ge=1, description="σ₁²/σ_N²")

    @model_validator(mode="after")
    def _wide(self) -> SyntheticParams:
        if self.n > self.dim:
            raise ValueError(f"n = {self.n} > dim = {self.dim}: exact fit needs N ≤ d")
        return self


class MinimalistParams(StrictModel):
    """Training of the minimalist model (all sweeps)."""

    init_scale: float = Field(
        0.1,
        gt=0,
        lt=1,
        description="κ: balanced init |v_i| = ‖Π_W u‖ = α = κ·Q^{1/(2D)}, a share of the balanced minimum's scale",
    )
    loss_target: float = Field(1e-6, gt=0)
    max_steps: int = Field(150_000, ge=1)
    every: int = Field(2000, ge=1, description="exact Hessian every this many steps")


class PracticalParams(StrictModel):
    """Deep linear and tanh MLPs tracked by Lanczos, at one step size per figure."""

    architectures: list[Literal["linear", "tanh"]] = Field(
        default_factory=lambda: ["linear", "tanh"], min_length=1
    )
    width: int = Field(128, ge=1)
    depth: list[int] = Field(default_factory=lambda: [2, 3, 4], min_length=1)
    n: list[int] = Field(default_factory=lambda: [50, 100, 200], min_length=1)
    seeds: Seeds = Field(default_factory=lambda: [0, 1, 2, 3, 4])
    ratio: float = Field(0.5, gt=0, description="one η per figure: η = 2·ratio/max Ŝ_D over the grid")
    sgd_batch_size: int = Field(10, ge=1, description="B of the SGD comparison (at the middle N and depth)")
    loss_target: float = Field(1e-4, gt=0)
    max_steps: int = Field(500, ge=1)
    every: int = Field(250, ge=1)
    lanczos_tol: float = Field(1e-4, gt=0, lt=1)
    lanczos_max_restarts: int = Field(50, ge=1)
    judged: bool = Field(
        False,
        description="whether max_steps is meant to train the grid to the loss target, so the claim is judged; "
        "false: practical_networks is inconclusive by design (the default: the CPU budget cannot)",
    )

    @field_validator("depth")
    @classmethod
    def _depths(cls, depths: list[int]) -> list[int]:
        if any(depth < 1 for depth in depths):
            raise ValueError(f"depth {depths}: the depth D must be ≥ 1")
        return depths

    @model_validator(mode="after")
    def _batch(self) -> PracticalParams:
        middle = sorted(self.n)[len(self.n) // 2]
        if self.sgd_batch_size > middle:
            raise ValueError(f"sgd_batch_size = {self.sgd_batch_size} > N = {middle} (the middle n)")
        return self


class ClaimsParams(StrictModel):
    """Thresholds fixed before any run (the card's)."""

    rise_factor: float = Field(5.0, gt=1, description="S must rise at least this many times from init")
    bound_tolerance: float = Field(0.02, ge=0, description="final S within the bounds ± this share")
    eos_tolerance: float = Field(0.10, gt=0, description="EoS: final S within this share of 2/η")
    step_size_tolerance: float = Field(
        0.05, gt=0, description="GD below EoS: η moves S by less than this share"
    )
    linear_r: float = Field(0.9, gt=-1, lt=1)
    tanh_r: float = Field(0.7, gt=-1, lt=1)
    confidence: float = Field(0.95, gt=0, lt=1)


class SharpeningParams(StrictModel):
    """Everything the sharpening pipeline reads."""

    scale: Literal["default", "full"] = "default"
    full: dict[str, Any] = Field(default_factory=dict, description="values replacing these under scale: full")
    dataset: DatasetName = "mnist5k"
    classes: tuple[int, int] = (3, 5)
    seeds: Seeds = Field(default_factory=lambda: [0, 1, 2])
    synthetic: SyntheticParams = SyntheticParams()
    minimalist: MinimalistParams = MinimalistParams()
    sweeps: dict[str, SweepParams] = Field(default_factory=dict, min_length=1)
    practical: PracticalParams = PracticalParams()
    claims: ClaimsParams = ClaimsParams()

    @field_validator("classes")
    @classmethod
    def _two_classes(cls, classes: tuple[int, int]) -> tuple[int, int]:
        if classes[0] == classes[1]:
            raise ValueError(f"classes {list(classes)}: two different labels (+1, −1)")
        return classes

    @model_validator(mode="after")
    def _consistent(self) -> SharpeningParams:
        for name, sweep in self.sweeps.items():
            sizes = [self.synthetic.n] if sweep.data == "synthetic" else sweep.n
            for size in sweep.batch_size:
                if size is not None and not 1 <= size <= min(sizes):
                    raise ValueError(
                        f"sweeps.{name}.batch_size = {size}: B must lie in [1, N] with N = {min(sizes)}"
                    )
        missing_seeds = sorted(set(self.practical.seeds) - set(self.seeds))
        if missing_seeds:
            raise ValueError(
                f"practical.seeds {missing_seeds} are not in seeds (the subsets are drawn per seed)"
            )
        required = {"difficulty_depth", "synthetic_depth", "step_size", "batch"}
        missing = sorted(required - set(self.sweeps))
        if missing:
            raise ValueError(f"sweeps lacks {', '.join(missing)} (the claims read them)")
        return self

    def effective(self) -> SharpeningParams:
        """These params with `full:` merged in when `scale: full` (the same code at paper scale)."""
        if self.scale == "default" or not self.full:
            return self
        from stages.core.params import deep_merge, validate_section

        merged = deep_merge(self.model_dump(mode="json"), self.full)
        return validate_section(
            SharpeningParams, {**merged, "scale": "default", "full": {}}, "sharpening.full"
        )
