"""PPO pieces on hand cases, both actor-critics, encoders, environments as a data source, checkpoints."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from stages.datasets.environments import EnvSpec, EnvSpecError, WrapperSpec, make_env
from stages.methods.rl.clipping import clip_per_sample
from stages.methods.rl.config import GBRLConfig, MLPConfig, PPOConfig
from stages.methods.rl.encoders import CategoricalEncoder, ContinuousEncoder, build_encoder
from stages.methods.rl.gae import gae
from stages.methods.rl.gbrl_ac import GBRLActorCritic
from stages.methods.rl.losses import clipped_policy_loss, ppo_loss
from stages.methods.rl.mlp_ac import MLPActorCritic
from stages.methods.rl.run import evaluate_policy, make_vector, train_policy

CARTPOLE = EnvSpec(env_id="CartPole-v1")
GOTODOOR = EnvSpec(env_id="MiniGrid-GoToDoor-5x5-v0", wrappers=[WrapperSpec(name="minigrid_categorical")])
TINY = PPOConfig(n_envs=2, n_steps=32, batch_size=32, epochs=1)


def test_gae_matches_a_hand_computed_trajectory():
    rewards, values = np.ones((3, 1)), np.full((3, 1), 0.5)
    starts = np.array([[True], [False], [False]])
    advantages, returns = gae(rewards, values, starts, np.array([0.5]), np.array([False]), 0.9, 0.8)
    # δ = 1 + 0.9·0.5 − 0.5 = 0.95 at every step; A_t = δ + 0.72·A_{t+1}
    assert advantages[:, 0] == pytest.approx([0.95 + 0.72 * (0.95 + 0.72 * 0.95), 0.95 + 0.72 * 0.95, 0.95])
    assert returns == pytest.approx(advantages + values)


def test_gae_stops_at_an_episode_boundary():
    rewards, values = np.ones((3, 1)), np.full((3, 1), 0.5)
    starts = np.array([[True], [False], [True]])  # a new episode begins at step 2
    advantages, _ = gae(rewards, values, starts, np.array([0.5]), np.array([True]), 0.9, 0.8)
    # step 1 ends its episode: δ = 1 − 0.5; step 2 ends too (last_dones): δ = 0.5
    assert advantages[:, 0] == pytest.approx([0.95 + 0.72 * 0.5, 0.5, 0.5])


def test_clipped_objective_on_a_hand_case():
    advantages = torch.tensor([1.0, -1.0])
    log_prob = torch.log(torch.tensor([1.5, 0.5]))
    loss = clipped_policy_loss(log_prob, torch.zeros(2), advantages, 0.2)
    # min(1.5, 1.2)·1 = 1.2 and min(−0.5, −0.8) = −0.8: loss = −(1.2 − 0.8)/2
    assert loss.item() == pytest.approx(-0.2)


def test_ppo_loss_adds_half_mse_and_entropy():
    zeros = torch.zeros(2)
    loss = ppo_loss(
        zeros,
        zeros,
        zeros,
        torch.tensor([1.0, 3.0]),
        torch.tensor([0.0, 0.0]),
        torch.tensor([0.5, 0.5]),
        0.2,
        ent_coef=0.1,
        vf_coef=0.87,
    )
    assert loss.value == pytest.approx(0.5 * (1 + 9) / 2)
    assert loss.total.item() == pytest.approx(-0.1 * 0.5 + 0.87 * 2.5)
    assert loss.clip_fraction == 0.0


def test_per_sample_clipping():
    grads = torch.tensor([[3.0, 4.0], [0.3, 0.4]])
    clipped = clip_per_sample(grads, 1.0)
    assert clipped[0].tolist() == pytest.approx([0.6, 0.8])  # norm 5 → 1
    assert clipped[1].tolist() == pytest.approx([0.3, 0.4])  # inside the bound: unchanged
    assert clip_per_sample(torch.tensor([-20.0, 2.0]), 10.0).tolist() == [-10.0, 2.0]
    assert clip_per_sample(grads, None) is grads


def test_encoders_check_their_inputs():
    assert ContinuousEncoder()(np.ones((2, 2, 2))).shape == (2, 4)
    with pytest.raises(ValueError, match="NaN"):
        ContinuousEncoder()(np.array([[np.nan]]))
    encoded = CategoricalEncoder()(np.array([["a", 3]], dtype=object))
    assert encoded.tolist() == [["a", "3"]]
    with pytest.raises(ValueError, match="feature 1 of sample 0 is longer than 128 bytes"):
        CategoricalEncoder()(np.array([["a", "x" * 129]], dtype=object))
    with pytest.raises(ValueError, match="unknown encoder 'onehot'"):
        build_encoder("onehot")


@pytest.mark.parametrize("env_id", ["MiniGrid-GoToDoor-5x5-v0", "MiniGrid-DoorKey-5x5-v0"])
def test_minigrid_categorical_encoding_has_51_features(env_id):
    env = make_env(GOTODOOR.model_copy(update={"env_id": env_id}))
    observation, _ = env.reset(seed=0)
    assert observation.shape == (51,)
    assert all(isinstance(value, str) for value in observation)
    assert observation[0].count(",") == 2  # "object,color,state"
    assert observation[49] in {"0", "1", "2", "3"}
    assert observation[50].startswith(("go to the", "use the key"))


def test_unknown_env_id_or_wrapper_is_a_clear_error():
    with pytest.raises(EnvSpecError, match=r"my\.env\.env_id: unknown environment id 'CartPole-v9'"):
        make_env(EnvSpec(env_id="CartPole-v9"), key="my.env")
    with pytest.raises(EnvSpecError, match=r"wrappers\[0\]: unknown wrapper 'flat'; known: input_noise"):
        make_env(EnvSpec(env_id="CartPole-v1", wrappers=[WrapperSpec(name="flat")]))


def test_input_noise_scales_each_observation_by_one_scalar():
    clean, _ = make_env(CARTPOLE).reset(seed=3)
    noisy, _ = make_env(CARTPOLE.with_wrapper("input_noise", sigma=0.2, seed=1)).reset(seed=3)
    ratios = (noisy - clean) / np.abs(clean)
    assert np.ptp(ratios) < 1e-4 and abs(ratios[0]) > 0  # s + ε|s| with one ε for the whole state
    same, _ = make_env(CARTPOLE.with_wrapper("input_noise", sigma=0.0)).reset(seed=3)
    assert np.array_equal(same, clean)


def test_shared_gbrl_outputs_logits_and_one_value_per_sample():
    model = GBRLActorCritic(GBRLConfig(), input_dim=4, n_actions=2)
    logits, values = model.forward(np.zeros((5, 4), dtype=np.float32), requires_grad=False)
    assert logits.shape == (5, 2) and values.shape == (5,)
    with pytest.raises(ValueError, match=r"shape \(N, 4\)"):
        model.forward(np.zeros((5, 3)), requires_grad=False)


@pytest.mark.parametrize("shared", [True, False])
def test_gbrl_trains_one_tree_per_minibatch_and_round_trips(tmp_path, shared):
    model, _ = train_policy(CARTPOLE, GBRLConfig(shared_tree=shared), "continuous", TINY, 128, seed=0)
    iterations = 128 // (TINY.n_envs * TINY.n_steps) * (TINY.n_envs * TINY.n_steps // TINY.batch_size)
    assert model.size()["trees"] == iterations * (1 if shared else 2)
    model.save(tmp_path / "ac")
    for file in tmp_path.glob(
        "ac*.gbrl_model"
    ):  # the header's alignment padding is zeroed (same bytes per model)
        header = file.read_bytes()[:24]
        assert header[6:8] == bytes(2) and header[20:24] == bytes(4)
    fresh = GBRLActorCritic(GBRLConfig(shared_tree=shared), input_dim=4, n_actions=2)
    fresh.load(tmp_path / "ac")
    observations = np.random.default_rng(0).normal(size=(16, 4)).astype(np.float32)
    for before, after in zip(
        model.forward(observations, False), fresh.forward(observations, False), strict=True
    ):
        assert torch.equal(before, after)
    with pytest.raises(ValueError, match="tree structure differs"):
        GBRLActorCritic(GBRLConfig(shared_tree=not shared), 4, 2).load(tmp_path / "ac")


def test_mlp_checkpoint_round_trips_through_safetensors(tmp_path):
    model, _ = train_policy(CARTPOLE, MLPConfig(hidden=[8]), "continuous", TINY, 64, seed=0)
    model.save(tmp_path / "ac.safetensors")
    fresh = MLPActorCritic(4, 2, hidden=(8,), seed=99)
    fresh.load(tmp_path / "ac.safetensors")
    observations = np.ones((3, 4), dtype=np.float32)
    assert torch.equal(model.forward(observations, False)[0], fresh.forward(observations, False)[0])


def test_rollouts_and_training_are_deterministic_under_seed():
    first = train_policy(GOTODOOR, GBRLConfig(), "categorical", TINY, 64, seed=5)[1]
    second = train_policy(GOTODOOR, GBRLConfig(), "categorical", TINY, 64, seed=5)[1]
    other = train_policy(GOTODOOR, GBRLConfig(), "categorical", TINY, 64, seed=6)[1]
    assert first.episodes == second.episodes and first.losses == second.losses
    assert first.episodes != other.episodes
    env = make_vector(CARTPOLE, 3, seed=1)
    assert np.array_equal(env.reset(), make_vector(CARTPOLE, 3, seed=1).reset())


def test_evaluation_takes_the_same_number_of_episodes_from_every_env():
    model = MLPActorCritic(4, 2, hidden=(8,), seed=0)
    returns = evaluate_policy(CARTPOLE, model, "continuous", episodes=6, n_envs=3, seed=0)
    assert len(returns) == 6 and all(math.isfinite(r) and r >= 1 for r in returns)


def test_rl_train_command_saves_a_model_that_loads(tmp_path, capsys):
    import argparse
    import json

    from stages.methods.rl.commands import add_commands

    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers())
    output = tmp_path / "cartpole"
    args = parser.parse_args(
        [
            "rl-train",
            "--env-id",
            "CartPole-v1",
            "--model",
            "gbrl-separate",
            "--steps",
            "64",
            "--n-envs",
            "2",
            "--n-steps",
            "32",
            "--batch-size",
            "32",
            "--output",
            str(output),
        ]
    )
    args.handler(args)
    out = capsys.readouterr().out
    summary = json.loads(out[out.index('{\n  "env_id"') :])
    assert summary["env_steps"] == 64 and summary["size"]["trees"] == 4
    model = GBRLActorCritic(GBRLConfig(shared_tree=False), 4, 2)
    model.load(output)
    assert model.size()["trees"] == 2 * 2  # 2 minibatches × (policy tree + value tree)
