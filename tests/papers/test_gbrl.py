"""The GBRL paper: params errors, the claims logic on made-up runs, the timing claims on made-up timings."""

from __future__ import annotations

import polars as pl
import pytest

from stages.core.errors import ParamsError
from stages.core.params import read_params_file, validate_section
from stages.methods.rl.update_cost import update_block_seconds
from stages.papers.gbrl.claims import cartpole_claim, minigrid_claim, noise_claim, shared_claim
from stages.papers.gbrl.params import GBRLParams
from stages.papers.gbrl.timing import cost_curve, shared_time_claim, train_summary, update_cost_claim
from tests.conftest import REPO_ROOT


def params(**changes) -> GBRLParams:
    raw = read_params_file(REPO_ROOT / "params.yaml")["gbrl"]
    raw.update(changes)
    return validate_section(GBRLParams, raw, "gbrl")


def full() -> GBRLParams:
    """The full scale: MiniGrid at Table 2's 20 epochs, so the MiniGrid claims are judged."""
    return params(scale="full")


def test_params_are_the_papers_table_2_and_rl_zoo_and_name_bad_keys():
    p = params()
    shared = p.tasks["gotodoor"].policies["gbrl_shared"]
    assert (shared.model.policy_lr, shared.model.value_lr, shared.ppo.batch_size) == (0.17, 0.01, 512)
    cartpole = p.tasks["cartpole"].policies
    assert cartpole["gbrl_shared"].model.policy_grad_clip == 150.0
    assert cartpole["gbrl_separate"].model.shared_tree is False
    nn = cartpole["nn"]  # RL-Zoo's CartPole-v1 PPO, SB3's MlpPolicy and loss
    assert (nn.ppo.n_steps, nn.ppo.batch_size, nn.ppo.epochs, nn.model.lr) == (32, 256, 20, 0.001)
    assert (nn.model.lr_schedule, nn.ppo.clip_schedule, nn.ppo.value_loss) == ("linear", "linear", "mse")
    assert nn.model.shared_trunk is False and nn.ppo.vf_coef == 0.5
    assert p.tasks["gotodoor"].policies["nn"].ppo.gamma == 0.993  # gbrl_sb3's minigrid ppo_nn.sh
    # no epoch cut at any scale; MiniGrid only at full scale
    assert p.policy("cartpole", "gbrl_shared").ppo.epochs == 1 and list(p.grid.steps) == ["cartpole"]
    assert full().policy("gotodoor", "gbrl_shared").ppo.epochs == 20
    assert p.update_cost.iterations == 1000  # Table 1's scale
    with pytest.raises(ParamsError, match="gbrl"):
        params(default={"steps": {"atari": 10}})
    with pytest.raises(ParamsError, match=r"is not a task\.policy"):
        params(default={"steps": {"cartpole": 10}, "epochs": {"gotodoor.xgb": 1}})
    with pytest.raises(ParamsError, match=r"noise\.sigmas must contain 0"):
        params(noise={"sigmas": [0.1, 0.2]})
    with pytest.raises(ParamsError, match=r"noise\.policies must contain"):
        params(noise={"policies": ["gbrl_shared"]})


def runs_frame(
    scores: dict[tuple[str, str], list[float]], column: str = "score", extra: dict | None = None
) -> pl.DataFrame:
    rows = []
    for (task, policy), values in scores.items():
        for seed, value in enumerate(values):
            row = {"task": task, "policy": policy, "seed": seed, "score": 0.0, "model_bytes": 0}
            row[column] = value
            if extra and (task, policy) in extra:
                row["model_bytes"] = extra[(task, policy)][seed]
            rows.append(row)
    return pl.DataFrame(rows)


def test_minigrid_is_inconclusive_by_design_where_the_scale_does_not_run_it():
    claim = minigrid_claim(runs_frame({("cartpole", "nn"): [1.0, 2.0, 3.0]}), params())
    assert claim.verdict == "inconclusive" and claim.reason.startswith("Inconclusive by design")
    assert "20 PPO epochs" in claim.reason and "scale: full" in claim.reason and claim.n == 0


def test_minigrid_claim_follows_the_interval_where_a_policy_leaves_random_play():
    random = [0.05, 0.06, 0.05]
    runs = runs_frame(
        {
            ("gotodoor", "gbrl_separate"): [0.9, 0.92, 0.91],
            ("gotodoor", "nn"): [0.5, 0.55, 0.52],
            ("gotodoor", "random"): random,
        }
    )
    assert minigrid_claim(runs, full()).verdict == "holds"
    worse = runs_frame(
        {
            ("gotodoor", "gbrl_separate"): [0.1, 0.12, 0.11],
            ("gotodoor", "nn"): [0.5, 0.51, 0.5],
            ("gotodoor", "random"): random,
        }
    )
    assert minigrid_claim(worse, full()).verdict == "fails"
    at_random = runs_frame(
        {
            ("gotodoor", "gbrl_separate"): [0.04, 0.07, 0.05],
            ("gotodoor", "nn"): [0.06, 0.05, 0.06],
            ("gotodoor", "random"): random,
        }
    )
    claim = minigrid_claim(at_random, full())
    assert claim.verdict == "inconclusive" and "random play" in claim.reason
    grid = read_params_file(REPO_ROOT / "params.yaml")["gbrl"]["full"]
    cut = params(scale="full", full={**grid, "epochs": {"gotodoor.gbrl_separate": 4}})
    claim = minigrid_claim(worse, cut)
    assert claim.verdict == "inconclusive" and "4 of Table 2's 20 PPO epochs" in claim.reason


def test_cartpole_ratio_is_judged_on_the_log_scale_and_a_fail_below_the_budget_is_by_design():
    # ratios 0.8, 1.0, 1.25: geometric mean 1.0 (arithmetic 1.017); the log-scale interval ≈ [0.57, 1.74] straddles 0.9
    runs = runs_frame({("cartpole", "gbrl_separate"): [400, 500, 500], ("cartpole", "nn"): [500, 500, 400]})
    claim = cartpole_claim(runs, params())
    assert claim.evidence[0].mean == pytest.approx(1.0) and "log-ratio" in claim.evidence[0].interval_kind
    assert claim.verdict == "inconclusive" and claim.unit == "seed" and claim.n == 3
    close = runs_frame({("cartpole", "gbrl_separate"): [480, 500, 490], ("cartpole", "nn"): [500, 490, 500]})
    assert cartpole_claim(close, params()).verdict == "holds"  # a holds stands below the card's budget
    behind = runs_frame({("cartpole", "gbrl_separate"): [200, 210, 190], ("cartpole", "nn"): [480, 500, 490]})
    short = cartpole_claim(behind, params())  # 50k steps < GBRL's 1M operating point
    assert short.verdict == "inconclusive" and short.reason.startswith("Inconclusive by design")
    assert short.evidence[0].verdict == "fails"
    assert cartpole_claim(behind, params(claims={"cartpole_steps": 50_000})).verdict == "fails"


def test_noise_claim_compares_drops_relative_to_each_policys_clean_return_paired_by_seed():
    rows = []
    for seed in range(3):
        # gbrl: 250 → 225 (10 % lost); nn: 500 → 400 + seed (about 20 % lost): absolute drops 25 vs ~100
        for sigma, gbrl, nn in ((0.0, 250, 500), (0.1, 240, 450), (0.2, 225, 400 + seed)):
            rows += [
                {"policy": "gbrl_separate", "seed": seed, "sigma": sigma, "return": float(gbrl)},
                {"policy": "nn", "seed": seed, "sigma": sigma, "return": float(nn)},
            ]
    claim = noise_claim(pl.DataFrame(rows), params())
    assert claim.verdict == "holds"
    assert claim.measured["gbrl_relative_drop"] == pytest.approx({"0": 0.1, "1": 0.1, "2": 0.1})
    assert claim.measured["nn_relative_drop"]["1"] == pytest.approx(1 - 401 / 500)


def test_shared_claim_needs_half_the_bytes_and_the_score_within_a_share_of_the_gain_over_random():
    bytes_ = {("cartpole", "gbrl_shared"): [100, 104, 98], ("cartpole", "gbrl_separate"): [200, 201, 199]}
    scores = {
        ("cartpole", "gbrl_shared"): [300, 310, 305],
        ("cartpole", "gbrl_separate"): [302, 309, 306],
        ("cartpole", "random"): [22, 21, 23],
    }
    holds = shared_claim(runs_frame(scores, extra=bytes_), params())
    assert holds.verdict == "holds" and holds.evidence[0].mean == pytest.approx(0.5, abs=0.01)
    assert holds.evidence[1].threshold == pytest.approx(-0.1 * (304 - 22 + 1 / 3), abs=0.5)
    same_bytes = {key: [200, 200, 200] for key in bytes_}
    assert shared_claim(runs_frame(scores, extra=same_bytes), params()).verdict == "fails"
    far_behind = {**scores, ("cartpole", "gbrl_shared"): [150, 160, 140]}
    assert shared_claim(runs_frame(far_behind, extra=bytes_), params()).verdict == "fails"
    at_random = {
        **scores,
        ("cartpole", "gbrl_separate"): [20, 25, 21],
        ("cartpole", "gbrl_shared"): [21, 24, 20],
    }
    claim = shared_claim(runs_frame(at_random, extra=bytes_), params())
    assert claim.verdict == "inconclusive" and "random play" in claim.reason
    assert "MiniGrid" in claim.reason  # not run at the default scale: said


def test_timing_claims_on_made_up_seconds():
    p = params()
    cost = {
        "seconds": {"gbrl": [1.0, 1.1, 0.9], "xgboost": [10.0, 11.0, 9.5], "catboost": [5.0, 5.5, 5.2]},
        "iterations": 200,
        "rows": 128,
        "features": 20,
        "targets": 3,
    }
    claim, medians = update_cost_claim(cost, p)
    assert claim.verdict == "holds" and medians["gbrl"] == 1.0
    slow = {**cost, "seconds": {**cost["seconds"], "gbrl": [20.0, 21.0, 19.0]}}
    # at 200 updates (Table 1: 1000) the peers' growth with ensemble size cannot show: not a `fails`
    small = update_cost_claim(slow, p)[0]
    assert small.verdict == "inconclusive" and small.reason.startswith("Inconclusive by design")
    assert all(item.verdict == "fails" for item in small.evidence) and small.unit == "repeat"
    assert update_cost_claim({**slow, "iterations": 1000}, p)[0].verdict == "fails"
    ratio = claim.evidence[0]  # xgboost / gbrl: 10, 10, 10.56; judged on the log scale
    assert "log-ratio" in ratio.interval_kind and ratio.mean == pytest.approx(
        (10 * 10 * 9.5 / 0.9) ** (1 / 3)
    )
    train = {
        "runs": [
            {
                "task": "cartpole",
                "policy": label,
                "seed": seed,
                "env_steps": 100,
                "rollout_seconds": [1.0, 1.0],
                "update_seconds": [base + seed * 0.1, base],
            }
            for label, base in (("gbrl_shared", 1.0), ("gbrl_separate", 2.0))
            for seed in range(3)
        ]
    }
    assert shared_time_claim(train, p).verdict == "holds"
    assert train_summary(train)["cartpole"]["gbrl_shared"]["env_steps_per_second"] == 50.0


def test_cost_curve_is_milliseconds_per_update_against_the_ensemble_size():
    cost = {
        "iterations": 5,
        "block": 2,
        "block_seconds": {
            "gbrl": [[0.02, 0.02, 0.01], [0.04, 0.02, 0.01]],
            "xgboost": [[0.01, 0.03, 0.03]] * 2,
        },
    }
    curve = cost_curve(cost)
    assert [point["trees"] for point in curve["gbrl"]] == [2, 4, 5]
    assert [point["ms_per_update"] for point in curve["gbrl"]] == [15.0, 10.0, 10.0]  # medians of repeats
    assert curve["xgboost"][2]["ms_per_update"] == 30.0  # the last block holds one update


def test_update_blocks_interleave_the_libraries_on_the_same_batches():
    blocks = update_block_seconds(("gbrl", "xgboost"), 5, 16, 4, 2, 2, 0.1, repeats=2, seed=0, block=2)
    assert set(blocks) == {"gbrl", "xgboost"}
    assert all(len(per) == 2 and len(per[0]) == 3 for per in blocks.values())  # 2 repeats × 3 blocks
    assert all(s > 0 for per in blocks.values() for repeat in per for s in repeat)
