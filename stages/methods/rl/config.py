"""PPO and actor-critic settings as params models (no torch or gymnasium import)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from stages.core.params import StrictModel


class PPOConfig(StrictModel):
    """The PPO loop: rollout size, minibatches, epochs, discounting and loss weights."""

    n_envs: int = Field(8, ge=1)
    n_steps: int = Field(128, ge=1, description="steps per environment per rollout")
    batch_size: int = Field(64, ge=1, description="minibatch size (one tree / one Adam step per minibatch)")
    epochs: int = Field(1, ge=1)
    gamma: float = Field(0.98, gt=0, le=1)
    gae_lambda: float = Field(0.8, ge=0, le=1)
    clip_range: float = Field(0.2, gt=0)
    ent_coef: float = Field(0.0, ge=0)
    vf_coef: float = Field(0.87, ge=0)
    value_loss: Literal["half_mse", "mse"] = Field(
        "half_mse",
        description="½·mean (V − R)² (gbrl_sb3's PPO) or mean (V − R)² (SB3's PPO, whose vf_coef is 0.5)",
    )
    clip_schedule: Literal["constant", "linear"] = Field(
        "constant", description="linear: clip_range × the fraction of the run left (RL-Zoo's `lin_0.2`)"
    )
    normalize_advantage: bool = True

    @model_validator(mode="after")
    def _batch_fits(self) -> PPOConfig:
        if self.batch_size > self.n_envs * self.n_steps:
            raise ValueError(
                f"batch_size {self.batch_size} exceeds the rollout ({self.n_envs}×{self.n_steps})"
            )
        return self


class GBRLConfig(StrictModel):
    """GBRL's actor-critic: tree structure, per-output SGD learning rates, per-sample gradient clips."""

    kind: Literal["gbrl"] = "gbrl"
    shared_tree: bool = Field(True, description="one tree for [logits, value] (the paper's design) or two")
    policy_lr: float = Field(0.029, gt=0)
    value_lr: float = Field(0.015, gt=0)
    policy_grad_clip: float | None = Field(
        150.0, gt=0, description="per-sample clip of the policy gradient norm"
    )
    value_grad_clip: float | None = Field(10.0, gt=0, description="per-sample clip of the value gradient")
    max_depth: int = Field(4, ge=1, le=12)
    n_bins: int = Field(250, ge=2)
    grow_policy: Literal["oblivious", "greedy"] = "oblivious"
    split_score_func: Literal["cosine", "l2"] = "cosine"
    generator_type: Literal["Quantile", "Uniform"] = "Quantile"


class MLPConfig(StrictModel):
    """The network actor-critic: SB3's `MlpPolicy` for PPO (separate policy and value networks of `hidden`
    tanh units, orthogonal initialisation, Adam eps 1e-5), RL-Zoo's settings in the params."""

    kind: Literal["mlp"] = "mlp"
    hidden: list[int] = Field(default_factory=lambda: [64, 64], min_length=1)
    shared_trunk: bool = Field(
        False, description="one trunk for policy and value (False: SB3's separate π and v networks)"
    )
    ortho_init: bool = Field(True, description="SB3's orthogonal init: gains √2 hidden, 0.01 policy, 1 value")
    lr: float = Field(2.5e-4, gt=0)
    lr_schedule: Literal["constant", "linear"] = Field(
        "constant", description="linear: lr × the fraction of the run left (RL-Zoo's `lin_0.001`)"
    )
    max_grad_norm: float = Field(0.5, gt=0)


ModelConfig = GBRLConfig | MLPConfig
