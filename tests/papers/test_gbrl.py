"""The GBRL paper: params errors, the claims logic on made-up runs, the timing claims on made-up timings."""

from __future__ import annotations

import polars as pl
import pytest

from stages.core.errors import ParamsError
from stages.core.params import read_params_file, validate_section
from stages.papers.gbrl.claims import cartpole_claim, minigrid_claim, noise_claim, shared_claim
from stages.papers.gbrl.params import GBRLParams
from stages.papers.gbrl.timing import shared_time_claim, train_summary, update_cost_claim
from tests.conftest import REPO_ROOT


def params(**changes) -> GBRLParams:
    raw = read_params_file(REPO_ROOT / "params.yaml")["gbrl"]
    raw.update(changes)
    return validate_section(GBRLParams, raw, "gbrl")


def test_params_are_the_papers_table_2_and_name_bad_keys():
    p = params()
    shared = p.tasks["gotodoor"].policies["gbrl_shared"]
    assert (shared.model.policy_lr, shared.model.value_lr, shared.ppo.batch_size) == (0.17, 0.01, 512)
    assert p.tasks["cartpole"].policies["gbrl"].model.policy_grad_clip == 150.0
    assert p.policy("gotodoor", "gbrl_shared").ppo.epochs == 4  # the default scale's override
    assert p.model_copy(update={"scale": "full"}).policy("gotodoor", "gbrl_shared").ppo.epochs == 20
    with pytest.raises(ParamsError, match="gbrl"):
        params(default={"steps": {"atari": 10}})
    with pytest.raises(ParamsError, match=r"is not a task\.policy"):
        params(default={"steps": {"cartpole": 10, "gotodoor": 10}, "epochs": {"gotodoor.xgb": 1}})
    with pytest.raises(ParamsError, match=r"noise\.sigmas must contain 0"):
        params(noise={"sigmas": [0.1, 0.2]})


def runs_frame(
    scores: dict[tuple[str, str], list[float]], trees: dict[str, int] | None = None
) -> pl.DataFrame:
    rows = []
    for (task, policy), values in scores.items():
        for seed, score in enumerate(values):
            rows.append(
                {
                    "task": task,
                    "policy": policy,
                    "seed": seed,
                    "score": score,
                    "trees": (trees or {}).get(policy, 0),
                }
            )
    return pl.DataFrame(rows)


def table2_epochs() -> GBRLParams:
    """Default params without the epoch cut: GBRL's MiniGrid PPO at Table 2's 20 epochs (claims judged)."""
    grid = read_params_file(REPO_ROOT / "params.yaml")["gbrl"]["default"]
    return params(default={**grid, "epochs": {}})


def test_minigrid_and_cartpole_claims_follow_the_intervals():
    p = table2_epochs()
    runs = runs_frame(
        {
            ("gotodoor", "gbrl_shared"): [0.9, 0.92, 0.91],
            ("gotodoor", "nn"): [0.5, 0.55, 0.52],
            ("cartpole", "gbrl"): [300, 100, 480],
            ("cartpole", "nn"): [500, 500, 500],
        }
    )
    assert minigrid_claim(runs, p).verdict == "holds"
    cartpole = cartpole_claim(runs, p)
    assert cartpole.verdict == "inconclusive"  # ratios 0.6, 0.2, 0.96: the interval straddles 0.9
    assert cartpole.evidence[0].per_seed == {"0": 0.6, "1": 0.2, "2": 0.96}
    worse = runs_frame({("gotodoor", "gbrl_shared"): [0.1, 0.12, 0.11], ("gotodoor", "nn"): [0.5, 0.51, 0.5]})
    assert minigrid_claim(worse, p).verdict == "fails"


def test_minigrid_and_shared_tree_are_inconclusive_by_design_at_4_of_20_epochs():
    p = params()  # the default scale: GBRL's MiniGrid PPO at 4 of Table 2's 20 epochs
    worse = runs_frame({("gotodoor", "gbrl_shared"): [0.1, 0.12, 0.11], ("gotodoor", "nn"): [0.5, 0.51, 0.5]})
    claim = minigrid_claim(worse, p)
    assert claim.verdict == "inconclusive" and claim.reason.startswith("Inconclusive by design")
    assert "4 of Table 2's 20 PPO epochs" in claim.reason and claim.evidence[0].verdict == "fails"
    scores = {
        ("gotodoor", "gbrl_shared"): [0.1, 0.11, 0.1],
        ("gotodoor", "gbrl_separate"): [0.12, 0.13, 0.12],
    }
    shared = shared_claim(runs_frame(scores, {"gbrl_shared": 100, "gbrl_separate": 200}), p)
    assert shared.verdict == "inconclusive" and "random play" in shared.reason
    assert all(item.verdict == "holds" for item in shared.evidence)  # measured, reported, not a finding


def test_cartpole_ratio_is_judged_on_the_log_scale():
    # ratios 0.8, 1.0, 1.25: geometric mean 1.0 (arithmetic 1.017); the log-scale interval ≈ [0.57, 1.74] straddles 0.9
    runs = runs_frame({("cartpole", "gbrl"): [400, 500, 500], ("cartpole", "nn"): [500, 500, 400]})
    claim = cartpole_claim(runs, params())
    assert claim.evidence[0].mean == pytest.approx(1.0) and "log-ratio" in claim.evidence[0].interval_kind
    assert claim.verdict == "inconclusive" and claim.unit == "seed" and claim.n == 3
    close = runs_frame({("cartpole", "gbrl"): [480, 500, 490], ("cartpole", "nn"): [500, 490, 500]})
    assert cartpole_claim(close, params()).verdict == "holds"


def test_noise_claim_compares_drops_paired_by_seed():
    rows = []
    for seed in range(3):
        for sigma, gbrl, nn in ((0.0, 500, 500), (0.1, 490, 400), (0.2, 480 + seed, 300 - seed)):
            rows += [
                {"policy": "gbrl", "seed": seed, "sigma": sigma, "return": float(gbrl)},
                {"policy": "nn", "seed": seed, "sigma": sigma, "return": float(nn)},
            ]
    claim = noise_claim(pl.DataFrame(rows), params())
    assert claim.verdict == "holds"
    assert claim.measured["gbrl_drop"] == {"0": 20.0, "1": 19.0, "2": 18.0}


def test_shared_claim_needs_half_the_trees_and_the_score():
    scores = {("gotodoor", "gbrl_shared"): [0.8, 0.82, 0.81], ("gotodoor", "gbrl_separate"): [0.8, 0.81, 0.8]}
    holds = shared_claim(runs_frame(scores, {"gbrl_shared": 100, "gbrl_separate": 200}), table2_epochs())
    assert holds.verdict == "holds" and holds.evidence[0].mean == pytest.approx(0.5)
    same_trees = shared_claim(runs_frame(scores, {"gbrl_shared": 200, "gbrl_separate": 200}), table2_epochs())
    assert same_trees.verdict == "fails"


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
                "task": "gotodoor",
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
    assert train_summary(train)["gotodoor"]["gbrl_shared"]["env_steps_per_second"] == 50.0
