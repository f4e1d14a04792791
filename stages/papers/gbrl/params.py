"""The `gbrl:` section of params.yaml: tasks (an environment and its policies), scales, noise study, claims."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from stages.core.params import StrictModel
from stages.datasets.environments import WrapperSpec
from stages.methods.rl.config import GBRLConfig, MLPConfig, PPOConfig
from stages.papers.fields import Seeds

CATEGORICAL = [WrapperSpec(name="minigrid_categorical")]
FLAT = [WrapperSpec(name="minigrid_flat")]
# Table 2 (PPO) of the paper: CartPole and MiniGrid settings for GBRL; RL-Zoo's PPO for the network.
CARTPOLE_PPO = PPOConfig(n_envs=8, n_steps=128, batch_size=64, epochs=1, gamma=0.98, gae_lambda=0.8)
MINIGRID_PPO = PPOConfig(n_envs=16, n_steps=256, batch_size=512, epochs=20, gamma=0.99, gae_lambda=0.95)
NN_PPO = PPOConfig(n_envs=8, n_steps=128, batch_size=64, epochs=10, gamma=0.98, gae_lambda=0.8, vf_coef=0.5)
NN_MINIGRID_PPO = NN_PPO.model_copy(update={"gamma": 0.99, "gae_lambda": 0.95})
MINIGRID_GBRL = GBRLConfig(policy_lr=0.17, value_lr=0.01, policy_grad_clip=None, value_grad_clip=None)


class PolicyParams(StrictModel):
    """One actor-critic trained on a task: model, PPO settings, observation encoder and wrappers."""

    model: GBRLConfig | MLPConfig = Field(discriminator="kind")
    ppo: PPOConfig
    encoder: Literal["continuous", "categorical"] = "continuous"
    wrappers: list[WrapperSpec] = Field(default_factory=list)


class TaskParams(StrictModel):
    """An environment (gymnasium id) and the policies compared on it, by label."""

    env_id: str = Field(min_length=1)
    policies: dict[str, PolicyParams] = Field(min_length=1)


def default_tasks() -> dict[str, TaskParams]:
    gbrl_cartpole = PolicyParams(model=GBRLConfig(), ppo=CARTPOLE_PPO)
    nn_cartpole = PolicyParams(model=MLPConfig(), ppo=NN_PPO)

    def minigrid(env_id: str) -> TaskParams:
        return TaskParams(
            env_id=env_id,
            policies={
                "gbrl_shared": PolicyParams(
                    model=MINIGRID_GBRL, ppo=MINIGRID_PPO, encoder="categorical", wrappers=CATEGORICAL
                ),
                "gbrl_separate": PolicyParams(
                    model=MINIGRID_GBRL.model_copy(update={"shared_tree": False}),
                    ppo=MINIGRID_PPO,
                    encoder="categorical",
                    wrappers=CATEGORICAL,
                ),
                "nn": PolicyParams(model=MLPConfig(), ppo=NN_MINIGRID_PPO, wrappers=FLAT),
            },
        )

    return {
        "cartpole": TaskParams(env_id="CartPole-v1", policies={"gbrl": gbrl_cartpole, "nn": nn_cartpole}),
        "gotodoor": minigrid("MiniGrid-GoToDoor-5x5-v0"),
        "doorkey": minigrid("MiniGrid-DoorKey-5x5-v0"),
    }


class Grid(StrictModel):
    """What one scale runs: tasks with their env steps, seeds, and PPO epochs overridden per task.policy."""

    steps: dict[str, int] = Field(min_length=1, description="env steps per run, by task (the tasks run)")
    seeds: Seeds = Field(default_factory=lambda: [0, 1])
    epochs: dict[str, int] = Field(
        default_factory=dict, description="PPO epochs by `task.policy`, overriding the policy's (CPU budget)"
    )


class NoiseParams(StrictModel):
    """The input-shift study: s + ε|s|, ε ~ N(0, σ) per step, on one task's trained policies."""

    task: str = "cartpole"
    sigmas: list[float] = Field(default_factory=lambda: [0.0, 0.05, 0.1, 0.2], min_length=2)
    episodes: int = Field(20, ge=2)
    n_envs: int = Field(4, ge=1)


class UpdateCostParams(StrictModel):
    """Table 1: one-tree updates on random batches, gbrl vs XGBoost vs CatBoost, one thread each."""

    iterations: int = Field(200, ge=1)
    rows: int = Field(128, ge=2)
    features: int = Field(20, ge=1)
    targets: int = Field(3, ge=1)
    depth: int = Field(4, ge=1)
    lr: float = Field(0.1, gt=0)
    repeats: int = Field(3, ge=1)


class ClaimsParams(StrictModel):
    """Thresholds fixed before any run."""

    minigrid_task: str = "gotodoor"
    minigrid_gbrl: str = "gbrl_shared"
    minigrid_margin: float = Field(0.0, ge=0, description="GBRL − NN score must lie above −margin")
    cartpole_ratio: float = Field(
        0.9, gt=0, le=1, description="GBRL/NN score must lie above this (within 10%)"
    )
    noise_sigma: float = Field(0.2, ge=0)
    shared_label: str = "gbrl_shared"
    separate_label: str = "gbrl_separate"
    shared_tree_ratio: float = Field(0.6, gt=0, description="shared/separate trees must lie below this (~½)")
    shared_margin: float = Field(0.1, ge=0, description="shared − separate score must lie above −margin")
    speed_ratio: float = Field(1.0, gt=0, description="peer / gbrl update seconds must lie above this")
    confidence: float = Field(0.95, gt=0, lt=1)


class GBRLParams(StrictModel):
    """Everything the GBRL pipeline reads."""

    scale: Literal["default", "full"] = "default"
    default: Grid = Grid(
        steps={"cartpole": 50_000, "gotodoor": 40_960},
        seeds=[0, 1, 2],
        epochs={"gotodoor.gbrl_shared": 4, "gotodoor.gbrl_separate": 4},
    )
    full: Grid = Grid(
        steps={"cartpole": 1_000_000, "gotodoor": 1_000_000, "doorkey": 1_000_000}, seeds=[0, 1, 2, 3, 4]
    )
    tasks: dict[str, TaskParams] = Field(default_factory=default_tasks)
    noise: NoiseParams = NoiseParams()
    update_cost: UpdateCostParams = UpdateCostParams()
    claims: ClaimsParams = ClaimsParams()

    @property
    def grid(self) -> Grid:
        """The grid of the chosen scale."""
        return self.full if self.scale == "full" else self.default

    def policy(self, task: str, label: str) -> PolicyParams:
        """A policy's params with this scale's epochs override applied."""
        policy = self.tasks[task].policies[label]
        epochs = self.grid.epochs.get(f"{task}.{label}")
        if epochs is None:
            return policy
        return policy.model_copy(update={"ppo": policy.ppo.model_copy(update={"epochs": epochs})})

    def runs(self) -> list[tuple[str, str, int]]:
        """(task, policy label, seed) of every training run at this scale."""
        grid = self.grid
        return [
            (task, label, seed)
            for task in grid.steps
            for label in self.tasks[task].policies
            for seed in grid.seeds
        ]

    @model_validator(mode="after")
    def _consistent(self) -> GBRLParams:
        for scale, grid in (("default", self.default), ("full", self.full)):
            unknown = [task for task in grid.steps if task not in self.tasks]
            if unknown:
                raise ValueError(f"{scale}.steps: unknown tasks {unknown}; known: {', '.join(self.tasks)}")
            for key in grid.epochs:
                task, _, label = key.partition(".")
                if task not in self.tasks or label not in self.tasks[task].policies:
                    raise ValueError(f"{scale}.epochs: {key!r} is not a task.policy")
        grid, claims = self.grid, self.claims
        if self.noise.task not in grid.steps:
            raise ValueError(f"noise.task: {self.noise.task!r} is not run at scale {self.scale}")
        if claims.noise_sigma not in self.noise.sigmas or 0.0 not in self.noise.sigmas:
            raise ValueError(f"noise.sigmas must contain 0 and claims.noise_sigma ({claims.noise_sigma})")
        for task, labels in (
            (claims.minigrid_task, [claims.minigrid_gbrl, claims.shared_label, claims.separate_label, "nn"]),
            ("cartpole", ["gbrl", "nn"]),
        ):
            if task not in grid.steps:
                raise ValueError(f"claims: task {task!r} is not run at scale {self.scale}")
            missing = [label for label in labels if label not in self.tasks[task].policies]
            if missing:
                raise ValueError(f"claims: tasks.{task} has no policies {missing}")
        return self
