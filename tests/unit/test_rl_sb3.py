"""The network baseline as SB3 builds and trains it (issue 37): separate π / v networks, orthogonal init,
the value loss without ½, RL-Zoo's linear schedules; and the paired run seeds of the GBRL paper."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from stages.datasets.environments import EnvSpec
from stages.methods.rl.commands import task_settings
from stages.methods.rl.config import MLPConfig, PPOConfig
from stages.methods.rl.losses import ppo_loss
from stages.methods.rl.mlp_ac import MLPActorCritic
from stages.methods.rl.run import train_policy
from stages.papers.gbrl.runs import run_seed
from tests.conftest import REPO_ROOT


def test_mlp_has_separate_policy_and_value_networks_with_sb3s_orthogonal_init():
    model = MLPActorCritic(4, 2, hidden=(64, 64), seed=0)
    assert model.policy_trunk is not model.value_trunk
    first = model.policy_trunk[0].weight.detach()
    # orthogonal with gain √2: the rows of a (64, 4) matrix have orthogonal columns of norm √2
    assert torch.allclose(first.T @ first, 2.0 * torch.eye(4), atol=1e-4)
    head = model.policy_head.weight.detach()
    assert torch.allclose(head @ head.T, 1e-4 * torch.eye(2), atol=1e-7)  # gain 0.01
    assert float(model.value_head.weight.detach().norm()) == pytest.approx(1.0, abs=1e-5)  # gain 1
    assert all(
        float(layer.bias.detach().abs().max()) == 0.0
        for layer in model.policy_trunk
        if hasattr(layer, "bias")
    )
    shared = MLPActorCritic(4, 2, hidden=(8,), seed=0, shared_trunk=True)
    assert shared.policy_trunk is shared.value_trunk
    n_separate = MLPActorCritic(4, 2, hidden=(8,), seed=0).size()["parameters"]
    assert n_separate - shared.size()["parameters"] == 4 * 8 + 8  # the second trunk


def test_value_loss_scale_half_is_gbrl_sb3s_and_one_is_sb3s():
    zeros, values, returns = torch.zeros(2), torch.tensor([1.0, 3.0]), torch.zeros(2)
    half = ppo_loss(zeros, zeros, zeros, values, returns, zeros, 0.2, 0.0, 1.0)
    full = ppo_loss(zeros, zeros, zeros, values, returns, zeros, 0.2, 0.0, 1.0, value_scale=1.0)
    assert (half.value, full.value) == (pytest.approx(2.5), pytest.approx(5.0))


def test_linear_schedule_anneals_the_rate_to_zero_over_the_run():
    model = MLPActorCritic(4, 2, hidden=(8,), lr=1e-3, lr_schedule="linear")
    model.set_progress(0.25)
    assert model.optimizer.param_groups[0]["lr"] == pytest.approx(2.5e-4)
    model.set_progress(-0.01)  # SB3's last update can overshoot the run's steps: never a negative rate
    assert model.optimizer.param_groups[0]["lr"] == 0.0
    constant = MLPActorCritic(4, 2, hidden=(8,), lr=1e-3)
    constant.set_progress(0.25)
    assert constant.optimizer.param_groups[0]["lr"] == 1e-3


def test_a_linear_clip_schedule_trains_and_a_clip_of_zero_freezes_the_policy():
    ppo = PPOConfig(n_envs=2, n_steps=16, batch_size=32, epochs=2, clip_schedule="linear", value_loss="mse")
    config = MLPConfig(hidden=[8], lr=1e-2, lr_schedule="linear")
    _, result = train_policy(EnvSpec(env_id="CartPole-v1"), config, "continuous", ppo, 64, seed=0)
    assert len(result.losses) == 2 and all(math.isfinite(loss["value"]) for loss in result.losses)
    # the last update has 0 of the run left: rate 0 and clip 0, so nothing is clipped beyond ratio 1
    assert result.losses[-1]["clip_fraction"] >= 0.0


def test_every_policy_of_a_task_shares_the_run_seed():
    assert run_seed(0, "cartpole", 3) == run_seed(0, "cartpole", 3)
    assert run_seed(0, "cartpole", 3) != run_seed(0, "cartpole", 4) != run_seed(0, "gotodoor", 4)


def test_rl_train_reads_per_env_gradient_clips_from_the_params_file(tmp_path):
    params = REPO_ROOT / "params.yaml"
    minigrid = task_settings("MiniGrid-GoToDoor-5x5-v0", shared=True, params_file=params)
    assert minigrid == {
        "policy_lr": 0.17,
        "value_lr": 0.01,
        "policy_grad_clip": None,
        "value_grad_clip": None,
    }
    cartpole = task_settings("CartPole-v1", shared=False, params_file=params)
    assert (cartpole["policy_grad_clip"], cartpole["value_grad_clip"]) == (150.0, 10.0)
    assert task_settings("Acrobot-v1", shared=True, params_file=params) == {}
    assert task_settings("CartPole-v1", shared=True, params_file=tmp_path / "none.yaml") == {}
    assert np.isfinite(cartpole["policy_lr"])
