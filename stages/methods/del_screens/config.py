"""Options of the DEL simulator and of DEL-Compose (pydantic; imports no RDKit or torch)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from stages.core.params import StrictModel


class SimulationOptions(StrictModel):
    """The simulated screen: library size, the hidden affinity's parts and the sequencing model."""

    per_cycle: int = Field(12, ge=2, description="building blocks per cycle (library = per_cycle³ compounds)")
    outside_blocks: int = Field(
        3, ge=1, description="extra blocks per class, used only by external compounds"
    )
    heldout: int = Field(40, ge=3, description="library compounds with a measured Kd (on- and off-DNA)")
    external: int = Field(6, ge=1, description="compounds outside the library with a measured Kd")
    synthon_sd: float = Field(
        1.0, gt=0, description="sd of each building block's affinity effect (pKd units)"
    )
    descriptor_share: float = Field(
        0.7, ge=0, le=1, description="share of a block's effect variance explained by its descriptors"
    )
    pair_sd: float = Field(
        1.5, ge=0, description="sd of the A×B pair interaction (the part a disynthon split hides)"
    )
    linker_sd: float = Field(0.5, ge=0, description="sd of the on-DNA linker term (a function of block A)")
    mean_pkd: float = Field(6.0, description="mean off-DNA pKd of the library")
    target_slope: float = Field(1.0, gt=0, description="log enrichment over matrix per pKd unit")
    matrix_sd: float = Field(0.3, ge=0, description="sd of the matrix-binding log rate (from compound logP)")
    load_mean: float = Field(300.0, gt=0, description="mean pre-selection load count")
    load_sd: float = Field(0.5, ge=0, description="log-normal sd of the load")
    depth: float = Field(0.004, gt=0, description="matrix reads per load read (λᶜ ≈ load·depth)")
    replicate_sd: float = Field(0.3, ge=0, description="sd of the per-replicate log offsets β_r")
    zero_prob_matrix: float = Field(0.2, ge=0, lt=1, description="ZIP structural-zero probability, matrix")
    zero_prob_target: float = Field(0.2, ge=0, lt=1, description="ZIP structural-zero probability, target")
    kd_noise_sd: float = Field(0.3, ge=0, description="sd of measured pKd around the true affinity")
    valid: float = Field(0.1, gt=0, lt=0.5, description="valid share of each split")
    test: float = Field(0.1, gt=0, lt=0.5, description="test share of each split")
    disynthon_key: Literal["ab", "ac", "bc"] = Field("ab", description="the building-block pair grouped")
    seed: int = Field(0, ge=0)


class ComposeOptions(StrictModel):
    """DEL-Compose: encoder, likelihood and training (the paper: Adam 5e-5, batch 64)."""

    variant: Literal["full", "factorized"] = "full"
    likelihood: Literal["zip", "nb"] = "zip"
    hidden: int = Field(128, ge=4)
    heads: int = Field(4, ge=1, description="attention heads of the factorized variant")
    radius: int = Field(3, ge=1, description="Morgan radius (the paper: 3, chirality on)")
    n_bits: int = Field(2048, ge=64)
    learning_rate: float = Field(1e-3, gt=0)
    batch_size: int = Field(64, ge=1)
    epochs: int = Field(60, ge=1)
    patience: int = Field(10, ge=1, description="epochs without a better valid NLL before stopping")
    threads: int = Field(1, ge=1)

    @model_validator(mode="after")
    def _heads_divide(self) -> ComposeOptions:
        if self.hidden % self.heads:
            raise ValueError(f"hidden ({self.hidden}) must be a multiple of heads ({self.heads})")
        return self
