"""The `climb:` section of params.yaml."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from stages.core.params import StrictModel
from stages.datasets.ecg.snomed import CLASSES
from stages.papers.fields import Seeds

SITES = ("ptbxl", "chapman", "georgia", "cpsc")


class Site(StrictModel):
    """One simulated site: class prior (the 7 BenchMD classes), stored rate and acquisition shifts."""

    prior: dict[str, float]
    fs: float = Field(100.0, gt=0)
    gain: float = Field(1.0, gt=0)
    noise: float = Field(0.02, ge=0, description="white noise sd, mV")
    wander: float = Field(0.05, ge=0, description="baseline wander amplitude, mV")
    hr_shift: float = Field(0.0, description="heart-rate shift, bpm")

    @model_validator(mode="after")
    def _prior(self) -> Site:
        unknown = sorted(set(self.prior) - set(CLASSES))
        if unknown:
            raise ValueError(f"prior: unknown classes {unknown}; classes: {', '.join(CLASSES)}")
        if any(value < 0 for value in self.prior.values()) or sum(self.prior.values()) <= 0:
            raise ValueError("prior: weights must be ≥ 0 with a positive sum")
        return self


def _sites() -> dict[str, Site]:
    return {
        # PTB-XL: the largest, most balanced; CPSC: mostly conduction disturbance, 12 MI vs 2,913 CD; Georgia:
        # 14 AF; Chapman: 10 MI (the card's split-CSV priors, rounded into shares)
        "ptbxl": Site(
            prior={
                "normal": 0.38,
                "cd": 0.12,
                "mi": 0.14,
                "sttc": 0.14,
                "other": 0.08,
                "afib": 0.06,
                "hyp": 0.08,
            },
            fs=100.0,
            noise=0.05,
            wander=0.1,
        ),
        "chapman": Site(
            prior={
                "normal": 0.24,
                "cd": 0.08,
                "mi": 0.01,
                "sttc": 0.17,
                "other": 0.26,
                "afib": 0.20,
                "hyp": 0.04,
            },
            fs=500.0,
            gain=1.3,
            noise=0.08,
            wander=0.2,
            hr_shift=5.0,
        ),
        "georgia": Site(
            prior={
                "normal": 0.28,
                "cd": 0.16,
                "mi": 0.04,
                "sttc": 0.26,
                "other": 0.20,
                "afib": 0.02,
                "hyp": 0.04,
            },
            fs=250.0,
            gain=0.8,
            noise=0.12,
            wander=0.3,
            hr_shift=-3.0,
        ),
        "cpsc": Site(
            prior={
                "normal": 0.14,
                "cd": 0.46,
                "mi": 0.01,
                "sttc": 0.14,
                "other": 0.14,
                "afib": 0.10,
                "hyp": 0.01,
            },
            fs=500.0,
            gain=1.1,
            noise=0.1,
            wander=0.25,
            hr_shift=8.0,
        ),
    }


class Data(StrictModel):
    """Record counts, the run's rate and length, the stored sites, the OOD site and the fusion cohort."""

    fs: float = Field(
        100.0, gt=0, description="the run's rate: every record is resampled to it (the card: 100 Hz)"
    )
    seconds: float = Field(10.0, gt=0)
    train_per_site: int = Field(150, ge=10)
    validation_share: float = Field(0.2, gt=0, lt=1, description="of train_per_site: checkpoint selection")
    test_per_site: int = Field(60, ge=10)
    second_label: float = Field(0.25, ge=0, le=1, description="chance of a second abnormal label")
    sites: dict[str, Site] = Field(default_factory=_sites)
    ood_train_per_class: int = Field(32, ge=1, description="the OOD pool k-shots are drawn from, per class")
    ood_test: int = Field(60, ge=10)
    fusion_train: int = Field(150, ge=16)
    fusion_test: int = Field(150, ge=10)
    seed: int = Field(0, ge=0)


class Training(StrictModel):
    """The shared recipe (every regime): gradient steps, batch, Adam, validation cadence; encoder widths."""

    steps: int = Field(300, ge=1)
    batch: int = Field(32, ge=1)
    lr: float = Field(1e-3, gt=0)
    weight_decay: float = Field(1e-3, ge=0)
    eval_every: int = Field(50, ge=1)
    widths: list[int] = Field(default_factory=lambda: [8, 16, 32, 32], min_length=4, max_length=4)


class FewShot(StrictModel):
    """RQ2: shots per class, draws per seed, fine-tuning steps, the single-site encoder's site."""

    shots: list[int] = Field(default_factory=lambda: [1, 8, 32], min_length=2)
    draws: int = Field(3, ge=1)
    steps: int = Field(60, ge=1)
    batch: int = Field(32, ge=1)
    lr: float = Field(1e-3, gt=0)
    single_site: Literal["ptbxl", "chapman", "georgia", "cpsc"] = "ptbxl"


class Fusion(StrictModel):
    """RQ3: heads, the weak encoder's site, shots per mortality class, steps, width."""

    heads: list[Literal["late", "concat", "cross_attention"]] = Field(
        default_factory=lambda: ["late", "concat", "cross_attention"], min_length=3
    )
    weak_site: Literal["ptbxl", "chapman", "georgia", "cpsc"] = "georgia"
    shots: int = Field(
        8, ge=1, description="patients per mortality class in the few-shot regime (oversampled)"
    )
    steps: int = Field(200, ge=1)
    batch: int = Field(32, ge=1)
    lr: float = Field(1e-3, gt=0)
    hidden: int = Field(64, ge=8)
    attention_heads: int = Field(8, ge=1)


class ClaimsParams(StrictModel):
    """Thresholds fixed before any run."""

    sites_needed: int = Field(3, ge=1, description="sites where multitask ≥ single-task (the card: 3 of 4)")
    mortality_margin: float = Field(0.01, ge=0, description="AUROC concat may trail the best head")
    bootstrap: int = Field(2000, ge=100)
    confidence: float = Field(0.95, gt=0, lt=1)


class ClimbParams(StrictModel):
    """Everything the CLIMB pipeline reads."""

    data: Data = Data()
    training: Training = Training()
    seeds: Seeds = Field(default_factory=lambda: [0, 1, 2, 3, 4])
    few_shot: FewShot = FewShot()
    fusion: Fusion = Fusion()
    workers: int = Field(2, ge=1, description="spawned one-thread processes for simulation and training")
    claims: ClaimsParams = ClaimsParams()

    @model_validator(mode="after")
    def _consistent(self) -> ClimbParams:
        missing = [site for site in SITES if site not in self.data.sites]
        if missing:
            raise ValueError(f"data.sites: missing {missing} (the four CLIMB ECG sites: {', '.join(SITES)})")
        extra = sorted(set(self.data.sites) - set(SITES))
        if extra:
            raise ValueError(f"data.sites: unknown sites {extra}; sites: {', '.join(SITES)}")
        if max(self.few_shot.shots) > self.data.ood_train_per_class:
            raise ValueError(
                f"few_shot.shots: {max(self.few_shot.shots)} exceeds data.ood_train_per_class "
                f"{self.data.ood_train_per_class}"
            )
        if sorted(set(self.few_shot.shots)) != self.few_shot.shots:
            raise ValueError(f"few_shot.shots: must be increasing and distinct, got {self.few_shot.shots}")
        if self.fusion.hidden % self.fusion.attention_heads:
            raise ValueError(
                f"fusion.hidden: {self.fusion.hidden} is not a multiple of fusion.attention_heads "
                f"{self.fusion.attention_heads}"
            )
        if int(self.data.train_per_site * self.data.validation_share) < 2:
            raise ValueError("data.validation_share: leaves fewer than 2 validation records per site")
        return self
