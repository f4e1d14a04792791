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
# Table 2 (PPO) of the paper: CartPole and MiniGrid settings for GBRL.
CARTPOLE_PPO = PPOConfig(n_envs=8, n_steps=128, batch_size=64, epochs=1, gamma=0.98, gae_lambda=0.8)
MINIGRID_PPO = PPOConfig(n_envs=16, n_steps=256, batch_size=512, epochs=20, gamma=0.99, gae_lambda=0.95)
MINIGRID_GBRL = GBRLConfig(policy_lr=0.17, value_lr=0.01, policy_grad_clip=None, value_grad_clip=None)
# The network: SB3's PPO (separate π / v networks 64-64 tanh, orthogonal init, value loss mean (V − R)² with
# vf_coef 0.5) at RL-Zoo's settings, which gbrl_sb3's experiments/*/ppo_nn.sh run: CartPole 8 × 32, minibatch
# 256, 20 epochs, lr lin_0.001, clip lin_0.2; MiniGrid 8 × 128, minibatch 64, 10 epochs, lr 2.5e-4, γ 0.993.
NN_CARTPOLE_PPO = PPOConfig(
    n_envs=8,
    n_steps=32,
    batch_size=256,
    epochs=20,
    gamma=0.98,
    gae_lambda=0.8,
    vf_coef=0.5,
    value_loss="mse",
    clip_schedule="linear",
)
NN_CARTPOLE = MLPConfig(lr=1e-3, lr_schedule="linear")
NN_MINIGRID_PPO = PPOConfig(
    n_envs=8,
    n_steps=128,
    batch_size=64,
    epochs=10,
    gamma=0.993,
    gae_lambda=0.95,
    vf_coef=0.5,
    value_loss="mse",
)
NN_MINIGRID = MLPConfig(lr=2.5e-4)


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
    def gbrl_pair(config: GBRLConfig, ppo: PPOConfig, **extra) -> dict[str, PolicyParams]:
        return {
            "gbrl_shared": PolicyParams(model=config, ppo=ppo, **extra),
            "gbrl_separate": PolicyParams(
                model=config.model_copy(update={"shared_tree": False}), ppo=ppo, **extra
            ),
        }

    def minigrid(env_id: str) -> TaskParams:
        return TaskParams(
            env_id=env_id,
            policies={
                **gbrl_pair(MINIGRID_GBRL, MINIGRID_PPO, encoder="categorical", wrappers=CATEGORICAL),
                "nn": PolicyParams(model=NN_MINIGRID, ppo=NN_MINIGRID_PPO, wrappers=FLAT),
            },
        )

    return {
        "cartpole": TaskParams(
            env_id="CartPole-v1",
            policies={
                **gbrl_pair(GBRLConfig(), CARTPOLE_PPO),
                "nn": PolicyParams(model=NN_CARTPOLE, ppo=NN_CARTPOLE_PPO),
            },
        ),
        "gotodoor": minigrid("MiniGrid-GoToDoor-5x5-v0"),
        "doorkey": minigrid("MiniGrid-DoorKey-5x5-v0"),
    }


class Grid(StrictModel):
    """What one scale runs: tasks with their env steps, seeds, and PPO epochs overridden per task.policy."""

    steps: dict[str, int] = Field(min_length=1, description="env steps per run, by task (the tasks run)")
    seeds: Seeds = Field(default_factory=lambda: [0, 1, 2, 3, 4])
    epochs: dict[str, int] = Field(
        default_factory=dict, description="PPO epochs by `task.policy`, overriding the policy's (CPU budget)"
    )
    random_episodes: int = Field(
        100, ge=1, description="episodes of a uniform-random policy per task and seed (the random-play line)"
    )
    workers: int | None = Field(
        None, ge=1, description="training processes (None: `common.threads`); results do not depend on it"
    )


class NoiseParams(StrictModel):
    """The input-shift study: s + ε|s|, ε ~ N(0, σ) per step, on one task's trained policies."""

    task: str = "cartpole"
    policies: list[str] = Field(
        default_factory=lambda: ["gbrl_separate", "nn"], min_length=1, description="the policies evaluated"
    )
    sigmas: list[float] = Field(default_factory=lambda: [0.0, 0.1, 0.2], min_length=2)
    episodes: int = Field(10, ge=2)
    n_envs: int = Field(10, ge=1)


class UpdateCostParams(StrictModel):
    """Table 1: one-tree updates on random batches, gbrl vs XGBoost vs CatBoost, one thread each."""

    iterations: int = Field(1000, ge=1)
    rows: int = Field(128, ge=2)
    features: int = Field(20, ge=1)
    targets: int = Field(3, ge=1)
    depth: int = Field(4, ge=1)
    lr: float = Field(0.1, gt=0)
    repeats: int = Field(3, ge=1)
    block: int = Field(50, ge=1, description="updates per timed block (the cost-vs-ensemble-size curve)")
    processes: int = Field(
        2,
        ge=1,
        description="repeats run side by side in this many processes, one thread each (ratios per repeat)",
    )


class ClaimsParams(StrictModel):
    """Thresholds fixed before any run."""

    gbrl_label: str = Field(
        "gbrl_separate",
        description="the GBRL policy compared with the network: separate trees, as gbrl_sb3's official "
        "scripts run it (`shared_tree_struct: False` in its defaults, never overridden)",
    )
    minigrid_task: str = "gotodoor"
    minigrid_margin: float = Field(0.0, ge=0, description="GBRL − NN score must lie above −margin")
    cartpole_ratio: float = Field(
        0.9, gt=0, le=1, description="GBRL/NN score must lie above this (within 10%)"
    )
    cartpole_steps: int = Field(
        1_000_000,
        ge=1,
        description="GBRL's CartPole operating point (the official ppo_gbrl.sh: 1M steps): below it a `fails` "
        "is inconclusive by design",
    )
    noise_sigma: float = Field(0.2, ge=0)
    shared_label: str = "gbrl_shared"
    separate_label: str = "gbrl_separate"
    shared_memory_ratio: float = Field(
        0.6, gt=0, description="shared/separate model bytes must lie below this (~½)"
    )
    shared_margin: float = Field(
        0.1,
        ge=0,
        description="shared − separate score must lie above −margin × the separate trees' gain over random play",
    )
    speed_ratio: float = Field(1.0, gt=0, description="peer / gbrl update seconds must lie above this")
    confidence: float = Field(0.95, gt=0, lt=1)


class GBRLParams(StrictModel):
    """Everything the GBRL pipeline reads."""

    scale: Literal["default", "full"] = "default"
    default: Grid = Grid(steps={"cartpole": 50_000})
    full: Grid = Grid(steps={"cartpole": 1_000_000, "gotodoor": 1_000_000, "doorkey": 1_000_000})
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
        missing = [p for p in self.noise.policies if p not in self.tasks[self.noise.task].policies]
        if missing:
            raise ValueError(f"noise.policies: {missing} are not policies of tasks.{self.noise.task}")
        if claims.noise_sigma not in self.noise.sigmas or 0.0 not in self.noise.sigmas:
            raise ValueError(f"noise.sigmas must contain 0 and claims.noise_sigma ({claims.noise_sigma})")
        if not {claims.gbrl_label, "nn"} <= set(self.noise.policies):
            raise ValueError(f"noise.policies must contain claims.gbrl_label ({claims.gbrl_label}) and nn")
        if "cartpole" not in grid.steps:
            raise ValueError(f"claims: task 'cartpole' is not run at scale {self.scale}")
        wanted = [claims.gbrl_label, claims.shared_label, claims.separate_label, "nn"]
        for task in {"cartpole", claims.minigrid_task} & set(grid.steps):
            missing = [label for label in wanted if label not in self.tasks[task].policies]
            if missing:
                raise ValueError(f"claims: tasks.{task} has no policies {missing}")
        return self
