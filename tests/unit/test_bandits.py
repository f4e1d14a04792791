"""Linear bandits: design optimality, regret bookkeeping, BLAE's batches and eliminations, input errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stages.core.errors import PipelineError
from stages.core.registry import UnknownNameError
from stages.methods.bandits.blae import BLAE, batch_bound, batch_sizes
from stages.methods.bandits.design import optimal_design, round_allocation
from stages.methods.bandits.environment import (
    BanditInputError,
    LinearBandit,
    uniform_instance,
    validate_instance,
)
from stages.methods.bandits.oful import RarelySwitchingOFUL
from stages.methods.bandits.registry import ALGORITHMS
from stages.methods.bandits.trace import Recorder

# ------------------------------------------------------------------------------------------------ design


@pytest.mark.parametrize("seed", range(6))
def test_d_optimal_design_max_variance_is_d_kiefer_wolfowitz(seed):
    rng = np.random.default_rng(seed)
    n_arms, dim = int(rng.integers(8, 120)), int(rng.integers(2, 9))
    arms = rng.normal(size=(n_arms, dim)) if seed % 2 else rng.uniform(size=(n_arms, dim))
    tol = 1e-4
    design = optimal_design(arms, reg=0.0, tol=tol)
    assert design.converged and design.gap <= tol
    assert abs(design.max_variance - dim) <= tol  # Σ π g = d, so d ≤ max g ≤ d + gap
    assert design.weights.min() >= 0 and math.isclose(design.weights.sum(), 1.0)
    assert len(design.support) <= dim * (dim + 1) // 2 + dim  # sparse (Carathéodory-type bound, with slack)


def test_regularised_design_keeps_max_variance_below_d():
    arms = np.random.default_rng(0).uniform(size=(60, 6))
    design = optimal_design(arms, reg=0.05, tol=1e-4)
    assert design.gap <= 1e-4
    assert design.max_variance <= 6 + 1e-4
    assert (
        design.max_variance < optimal_design(arms, reg=0.0, tol=1e-4).max_variance
    )  # the ridge adds information


def test_design_on_rank_deficient_arms_uses_their_span():
    rng = np.random.default_rng(1)
    base = rng.normal(size=(30, 3))
    arms = np.c_[base, base[:, 0] - base[:, 2]]
    assert abs(optimal_design(arms, tol=1e-5).max_variance - 3) <= 1e-5


def test_round_allocation_sums_to_n_and_keeps_every_supported_arm():
    weights = np.array([0.5, 0.3, 0.2, 0.0])
    counts = round_allocation(weights, 7)
    assert counts.sum() == 7 and counts[3] == 0 and (counts[:3] >= np.ceil(7 * weights[:3]) - 1).all()
    assert round_allocation(np.full(3, 1 / 3), 100).sum() == 100


# ------------------------------------------------------------------------------------------- bookkeeping

HAND_ARMS = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
HAND_THETA = np.array([1.0, 0.5])  # means 1, 0.5, 0.75 → gaps 0, 0.5, 0.25


def test_regret_bookkeeping_on_a_hand_made_three_arm_instance():
    bandit = LinearBandit(HAND_ARMS, HAND_THETA, noise_sd=0.0)
    assert bandit.gaps.tolist() == [0.0, 0.5, 0.25] and bandit.best_arm == 0
    recorder = Recorder(bandit, 6, np.random.default_rng(0))
    recorder.play(np.array([1, 2, 2]))
    recorder.play(np.array([0, 2, 1, 1, 1]))  # cut at the horizon: only 0, 2, 1 are played
    trace = recorder.finish("hand")
    assert trace.arms.tolist() == [1, 2, 2, 0, 2, 1]
    assert trace.regret.tolist() == [0.5, 0.25, 0.25, 0.0, 0.25, 0.5]
    assert trace.cumulative_regret.tolist() == [0.5, 0.75, 1.0, 1.0, 1.25, 1.75]
    assert trace.final_regret == 1.75
    assert trace.rewards.tolist() == [0.5, 0.75, 0.75, 1.0, 0.75, 0.5]  # noise-free rewards are the means
    assert trace.batch.tolist() == [0, 0, 0, 1, 1, 1] and trace.batch_ends.tolist() == [3, 6]
    assert trace.n_batches == 2


def test_unfinished_run_is_an_error():
    recorder = Recorder(LinearBandit(HAND_ARMS, HAND_THETA), 5, np.random.default_rng(0))
    recorder.play(np.array([0]))
    with pytest.raises(RuntimeError, match="4 of 5 pulls unplayed"):
        recorder.finish("short")


@pytest.mark.parametrize("name", ["blae", "phaelimd", "e4", "rs_oful", "linucb"])
def test_every_algorithm_plays_exactly_the_horizon_and_counts_its_regret(name):
    bandit = uniform_instance(8, 3, np.random.default_rng(3))
    trace = ALGORITHMS.build(name).run(bandit, 600, np.random.default_rng(4))
    assert trace.horizon == 600 and trace.algorithm == name
    assert np.allclose(trace.regret, bandit.gaps[trace.arms]) and trace.final_regret >= 0
    assert trace.batch_ends[-1] == 600 and trace.seconds > 0


def test_same_seed_same_trace():
    bandit = uniform_instance(20, 4, np.random.default_rng(0))
    first = BLAE().run(bandit, 3000, np.random.default_rng(9))
    second = BLAE().run(bandit, 3000, np.random.default_rng(9))
    assert np.array_equal(first.arms, second.arms) and np.array_equal(first.rewards, second.rewards)


def test_e4_records_gamma_and_its_stopping_test():
    trace = ALGORITHMS.build("e4", {"gamma": 2.0}).run(
        uniform_instance(6, 2, np.random.default_rng(1)), 2000, np.random.default_rng(2)
    )
    assert trace.info["gamma"] == 2.0 and "chernoff_statistic" in trace.info and trace.info["sdp_status"]


def test_rs_oful_batch_ends_when_det_grows_by_one_plus_c():
    bandit = uniform_instance(10, 3, np.random.default_rng(5))
    trace = RarelySwitchingOFUL().run(bandit, 3000, np.random.default_rng(6))
    gram, start = np.eye(3), 0
    for end in trace.batch_ends[:-1]:
        arm = trace.arms[start]
        assert (trace.arms[start:end] == arm).all()  # one arm per batch
        x = bandit.arms[arm]
        grown = np.linalg.det(gram + (end - start) * np.outer(x, x)) / np.linalg.det(gram)
        before = np.linalg.det(gram + (end - start - 1) * np.outer(x, x)) / np.linalg.det(gram)
        assert before <= 1.5 + 1e-9 < grown
        gram, start = gram + (end - start) * np.outer(x, x), end


# ------------------------------------------------------------------------------------------------- BLAE


@pytest.mark.parametrize("seed", range(5))
def test_blae_never_pulls_an_eliminated_arm(seed):
    bandit = uniform_instance(40, 4, np.random.default_rng(seed))
    trace = BLAE().run(bandit, 20_000, np.random.default_rng(100 + seed))
    eliminated = trace.eliminated_at[trace.arms]
    assert ((eliminated == -1) | (trace.batch <= eliminated)).all()
    assert (trace.eliminated_at >= 0).any()  # the test is not vacuous: arms were dropped
    assert set(trace.arms[trace.batch == trace.n_batches - 1]) <= set(trace.survivors)


def test_blae_keeps_the_best_arm_on_an_easy_instance_in_99_percent_of_200_seeds():
    arms = np.r_[np.eye(3), np.random.default_rng(0).uniform(0, 0.6, size=(7, 3))]
    bandit = LinearBandit(arms, np.array([1.0, 0.2, 0.2]))  # best arm e1; every gap ≥ 0.28
    assert np.sort(bandit.gaps)[1] >= 0.28
    lost = sum(
        BLAE().run(bandit, 5000, np.random.default_rng(seed)).best_arm_eliminated for seed in range(200)
    )
    assert lost <= 2


@pytest.mark.parametrize("horizon", [1, 2, 10, 1000, 20_000, 100_000])
def test_blae_batch_count_matches_the_grid_when_nothing_can_be_eliminated(horizon):
    tied = LinearBandit(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([1.0, 1.0]), noise_sd=0.0)  # equal means
    trace = BLAE().run(tied, horizon, np.random.default_rng(0))
    assert trace.n_batches == len(batch_sizes(horizon))
    assert trace.batch_ends.tolist() == np.cumsum(batch_sizes(horizon)).tolist()


def test_grid_sizes_and_the_batch_bound():
    assert batch_sizes(20_000)[:3] == [142, 1682, 5800]
    assert sum(batch_sizes(20_000)) == 20_000
    for horizon in [*range(1, 200), *np.unique(np.geomspace(200, 10**9, 400).astype(int))]:
        assert len(batch_sizes(int(horizon))) <= batch_bound(int(horizon)), horizon


def test_blae_commits_once_one_arm_is_left():
    bandit = LinearBandit(HAND_ARMS, HAND_THETA, noise_sd=0.01)
    trace = BLAE().run(bandit, 50_000, np.random.default_rng(0))
    assert trace.survivors.tolist() == [0]
    assert (trace.arms[trace.batch == trace.n_batches - 1] == 0).all()
    assert trace.n_batches < len(batch_sizes(50_000))


# ------------------------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(
    ("arms", "theta", "horizon", "message"),
    [
        (np.ones((1, 2)), np.ones(2), 10, r"K = 1.*K ≥ 2"),
        (np.ones((3, 0)), np.ones(0), 10, r"d = 0.*d ≥ 1"),
        (np.eye(2), np.ones(2), 0, r"horizon.*≥ 1"),
        (np.array([[1.0, np.nan], [0.0, 1.0]]), np.ones(2), 10, r"NaN or infinite.*\(0, 1\)"),
        (
            np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]),
            np.ones(2),
            10,
            r"rank 1 < d = 2 \(rank-deficient\)",
        ),
        (np.eye(2), np.ones(3), 10, r"θ must have d = 2"),
    ],
)
def test_bad_instances_fail_naming_the_problem(arms, theta, horizon, message):
    with pytest.raises(BanditInputError, match=message) as error:
        validate_instance(arms, theta, horizon, arms_source="my_arms.parquet")
    assert isinstance(error.value, PipelineError)


def test_bad_algorithm_names_and_options_fail_naming_the_key():
    with pytest.raises(UnknownNameError, match="valid names: blae, e4, linucb, phaelimd, rs_oful"):
        ALGORITHMS.build("ucb")
    with pytest.raises(PipelineError, match=r"option\.width"):
        ALGORITHMS.build("blae", {"width": -1.0}, key="option")
    with pytest.raises(PipelineError, match=r"option\.lambda"):
        ALGORITHMS.build("blae", {"lambda": 1.0}, key="option")


# ------------------------------------------------------------------- E4's last phase, α, SDP, instances (issue 37)


def test_spread_counts_shares_the_budget_by_the_design_and_keeps_counts_that_fit():
    from stages.methods.bandits.base import phase_pulls, spread_counts

    counts = np.array([10, 30, 60])
    assert spread_counts(counts, 500).tolist() == [10, 30, 60]  # fits: unchanged
    shared = spread_counts(counts, 50)
    assert shared.sum() == 50 and np.abs(shared - np.array([5, 15, 30])).max() <= 1
    assert spread_counts(counts, 0).sum() == 0
    active = np.array([7, 8, 9])
    assert np.bincount(phase_pulls(active, counts, 50), minlength=10)[7:].tolist() == shared.tolist()
    assert phase_pulls(active, counts, 50, "cut").tolist() == [7] * 10 + [8] * 30 + [9] * 10  # index order


def _best_arm_last(bandit: LinearBandit) -> LinearBandit:
    order = np.r_[np.delete(np.arange(bandit.n_arms), bandit.best_arm), bandit.best_arm]
    return LinearBandit(bandit.arms[order], bandit.theta, bandit.noise_sd)


def test_e4_regret_no_longer_depends_on_the_arms_order():
    from stages.methods.bandits.environment import e4_code_instance

    first = e4_code_instance(30, 4, np.random.default_rng(0))  # the E4 code's instance: best arm listed first
    last = _best_arm_last(first)

    def regret(bandit, final_phase):
        options = {"final_phase": final_phase, "sdp_solver": "scs"}
        return ALGORITHMS.build("e4", options).run(bandit, 5000, np.random.default_rng(1)).final_regret

    assert regret(first, "spread") == pytest.approx(regret(last, "spread"), rel=0.05)
    assert regret(last, "cut") > 3 * regret(first, "cut")  # the code's quirk: the order decides


def test_e4_alpha_is_the_latest_commits_formula():
    from stages.methods.bandits.e4 import exploration_rate

    assert exploration_rate(20_000, 5) == pytest.approx(3.10, abs=0.01)
    assert exploration_rate(20_000, 5, "first") == pytest.approx(14.96, abs=0.01)


def test_e4_sdp_by_clarabel_satisfies_its_constraints():
    from stages.methods.bandits.e4 import sdp_violation, track_and_stop_weights

    bandit = uniform_instance(40, 4, np.random.default_rng(2))
    estimate = bandit.theta + 0.05 * np.random.default_rng(3).standard_normal(4)
    weights, status = track_and_stop_weights(bandit.arms, estimate, "clarabel", 1e-6)
    assert status.startswith("optimal") and sdp_violation(bandit.arms, estimate, weights) <= 1.001
    trace = ALGORITHMS.build("e4").run(bandit, 3000, np.random.default_rng(4))
    assert trace.info["sdp_solver"] == "clarabel" and trace.info["final_phase"] == "spread"


def test_blae_width_is_capped_in_the_large_k_regime_only():
    from stages.methods.bandits.blae import confidence_log

    horizon = 20_000
    for n_arms, dim in [(50, 5), (200, 10), (200, 5), (400, 5), (30, 2)]:
        capped = confidence_log(n_arms, dim, horizon)
        union = confidence_log(n_arms, dim, horizon, large_k_cap=False)
        assert union == pytest.approx(math.log(2 * n_arms * horizon))
        assert (capped < union) == (n_arms > math.exp(dim))
    assert confidence_log(10**6, 5, horizon) == pytest.approx(5 + math.log(2 * horizon))  # no growth with K


def test_instances_e4_code_and_shuffled():
    from stages.methods.bandits.environment import e4_code_instance, shuffled

    bandit = e4_code_instance(20, 3, np.random.default_rng(0))
    assert bandit.theta.tolist() == [1.0, 0.0, 0.0] and bandit.arms[0].tolist() == [1.0, 0.0, 0.0]
    assert bandit.best_arm == 0
    mixed = shuffled(bandit, np.random.default_rng(1))
    assert sorted(map(tuple, mixed.arms)) == sorted(map(tuple, bandit.arms))
    assert mixed.gaps.max() == pytest.approx(bandit.gaps.max()) and mixed.best_arm != 0


def test_phaelimd_last_phase_is_spread_by_default():
    bandit = uniform_instance(30, 4, np.random.default_rng(6))
    spread = ALGORITHMS.build("phaelimd").run(bandit, 4000, np.random.default_rng(7))
    again = ALGORITHMS.build("phaelimd").run(_best_arm_last(bandit), 4000, np.random.default_rng(7))
    assert spread.info["final_phase"] == "spread"
    assert spread.final_regret == pytest.approx(again.final_regret, rel=0.1)
