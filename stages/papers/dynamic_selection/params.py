"""The `dynamic_selection:` section of params.yaml."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from stages.core.errors import PipelineError
from stages.core.params import StrictModel
from stages.methods.selection.dynamic.augment import AugmentationParams
from stages.methods.selection.dynamic.consistency import ProjectionConfig
from stages.methods.selection.dynamic.registry import SELECTION_METHODS
from stages.methods.selection.dynamic.sampler import check_ratio
from stages.models.config import TrainConfig
from stages.papers.fields import PoolParams, check_choices


class MethodParams(StrictModel):
    """One compared method: a registered dynamic selection method, its options, and what it is offered."""

    method: str
    options: dict[str, Any] = Field(default_factory=dict)
    augment: Literal["none", "all", "plan"] = Field(
        "none",
        description="the shared augmentation on none, all kept samples, or the ones the method routes (plan)",
    )
    augment_share: float = Field(
        1.0, gt=0, le=1, description="augment: all — each kept sample is augmented with this probability"
    )
    noise_rates: list[float] | None = Field(
        None, description="the noise rates this method runs at (None: every configured rate)"
    )


class SynergyParams(StrictModel):
    """The four runs the synergy claim compares (all at the claims ratio, no noise)."""

    no_augmentation: str = Field(
        "density_consistency_noaug", description="the method's selection without its routed augmentation"
    )
    random: str = Field("random", description="uniform random selection, no augmentation")
    random_share: str = Field(
        "random_aug_share", description="uniform random selection + the augmentation on ~ the method's share"
    )
    random_all: str = Field(
        "random_aug",
        description="uniform random selection + the augmentation on every kept sample (the gate)",
    )


class ClaimsParams(StrictModel):
    """What the claims stage compares, and its thresholds (fixed before any run, never fitted to results)."""

    method: str = "density_consistency"
    full: str = "full"
    baselines: list[str] = Field(
        default_factory=lambda: ["random", "random_aug", "random_aug_share", "loss_pruning_aug"],
        min_length=1,
        description="compared with the method at the claims ratio without noise",
    )
    noise_baselines: list[str] = Field(
        default_factory=lambda: ["random", "random_aug"],
        description="compared with the method at the claims ratio and noise rate, besides full data",
    )
    synergy: SynergyParams = SynergyParams()
    ablations: list[str] = Field(
        default_factory=lambda: ["density_consistency_noaug"],
        description="reported beside the claims, never judged",
    )
    ratio: float = Field(0.5, description="the kept ratio the claims are checked at")
    noise_rate: float = Field(0.2, gt=0, description="the noisy setting of the robustness claim")
    tolerance: float = Field(
        0.005, ge=0, description="accuracy below full data that still counts as lossless"
    )
    min_time_saving: float = Field(
        0.4, gt=0, lt=1, description="training-time saving the paper's claim needs"
    )
    confidence: float = Field(0.95, gt=0, lt=1, description="level of the t intervals over seeds")

    def clean_methods(self) -> list[str]:
        """The methods the claims read at noise 0."""
        synergy = self.synergy
        named = [synergy.no_augmentation, synergy.random, synergy.random_share, synergy.random_all]
        return list(dict.fromkeys([self.method, self.full, *self.baselines, *named, *self.ablations]))

    def noisy_methods(self) -> list[str]:
        """The methods the claims read at the noisy rate."""
        return list(dict.fromkeys([self.method, self.full, *self.noise_baselines]))


class DynamicSelectionParams(PoolParams):
    """Everything the dynamic-selection pipeline reads."""

    pool_size: int | None = Field(
        30000, ge=10, description="training pool drawn (stratified) from the train split"
    )
    noise_rates: list[float] = Field(default_factory=lambda: [0.0, 0.2], min_length=1)
    ratios: list[float] = Field(default_factory=lambda: [0.5], min_length=1)
    methods: dict[str, MethodParams]
    augmentation: AugmentationParams = AugmentationParams()
    class_descriptions: list[str] | None = Field(None, description="one text per class (None: built-in ones)")
    projection: ProjectionConfig = ProjectionConfig()
    train: TrainConfig = TrainConfig(epochs=8, architecture="cnn", channels=(8, 16), hidden=(64,))
    claims: ClaimsParams = ClaimsParams()

    @field_validator("noise_rates")
    @classmethod
    def _noise_rates(cls, rates: list[float]) -> list[float]:
        if len(set(rates)) != len(rates) or any(not 0 <= rate < 1 for rate in rates):
            raise ValueError("noise rates must be distinct and in [0, 1)")
        return rates

    @field_validator("ratios")
    @classmethod
    def _ratios(cls, ratios: list[float]) -> list[float]:
        if len(set(ratios)) != len(ratios):
            raise ValueError("ratios must be distinct")
        for ratio in ratios:
            try:
                check_ratio(ratio)
            except PipelineError as error:
                raise ValueError(str(error)) from None
        return ratios

    @model_validator(mode="after")
    def _methods_and_claims(self) -> DynamicSelectionParams:
        check_choices(self.methods, SELECTION_METHODS, "method", "dynamic_selection.methods")
        if self.claims.noise_rate not in self.noise_rates or 0.0 not in self.noise_rates:
            raise ValueError(f"noise_rates {self.noise_rates} must hold 0.0 and claims.noise_rate")
        self._check_methods()
        self._check_claims()
        return self

    def _check_methods(self) -> None:
        """Routed augmentation needs a routing method; a method's noise rates must be configured ones."""
        for label, entry in self.methods.items():
            if entry.augment == "plan" and not SELECTION_METHODS.get(entry.method).routes_augmentation:
                raise ValueError(
                    f"methods.{label}.augment: plan needs a method that routes samples to augmentation "
                    f"({entry.method} does not); use all"
                )
            unknown = sorted(set(entry.noise_rates or []) - set(self.noise_rates))
            if unknown:
                raise ValueError(
                    f"methods.{label}.noise_rates {unknown} are not in noise_rates {self.noise_rates}"
                )

    def _check_claims(self) -> None:
        """Every method the claims read exists and runs at the noise rate it is read at."""
        claims = self.claims
        named = [*claims.clean_methods(), *claims.noisy_methods()]
        missing = sorted({label for label in named if label not in self.methods})
        if missing:
            raise ValueError(f"claims name methods that are not in dynamic_selection.methods: {missing}")
        for rate, labels in ((0.0, claims.clean_methods()), (claims.noise_rate, claims.noisy_methods())):
            absent = [label for label in labels if not self.runs_at(label, rate)]
            if absent:
                raise ValueError(f"claims read {absent} at noise rate {rate}; add it to their noise_rates")
        if SELECTION_METHODS.get(self.methods[claims.full].method).uses_ratio:
            raise ValueError(f"claims.full '{claims.full}' must be a method that trains on all data")
        if claims.ratio not in self.ratios:
            raise ValueError(f"claims.ratio {claims.ratio} is not one of the ratios {self.ratios}")

    def runs_at(self, label: str, rate: float) -> bool:
        """Whether method `label` runs at noise rate `rate`."""
        rates = self.methods[label].noise_rates
        return rate in self.noise_rates and (rates is None or rate in rates)

    def runs(self, rate: float) -> list[tuple[str, float]]:
        """Every (method label, ratio) trained at noise rate `rate` per seed; full-data methods run once at 1.0."""
        pairs = []
        for label, entry in self.methods.items():
            if not self.runs_at(label, rate):
                continue
            uses_ratio = SELECTION_METHODS.get(entry.method).uses_ratio
            pairs += [(label, ratio) for ratio in self.ratios] if uses_ratio else [(label, 1.0)]
        return pairs
