"""Every registered core-set selector: valid indices, budget respected, class balance where promised."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stages.core.errors import ParamsError, PipelineError
from stages.core.registry import UnknownNameError
from stages.methods.selection.coreset import SelectionPool, budget_count, class_quotas
from stages.methods.selection.forgetting import forgetting_counts
from stages.methods.selection.herding import herd
from stages.methods.selection.kcenter import k_center_greedy
from stages.methods.selection.mrmc import fit_loss_decay, loss_reduction, regulariser_scores
from stages.methods.selection.registry import SELECTORS, make_selector
from stages.models.trace import TrainingTrace


def random_pool(n: int, n_classes: int, seed: int, epochs: int = 4) -> SelectionPool:
    rng = np.random.default_rng(seed)
    labels = np.sort(rng.integers(0, n_classes, n))
    labels[:n_classes] = np.arange(n_classes)  # every class present
    trace = TrainingTrace(
        loss=rng.gamma(2.0, 0.5, (n, epochs)).astype(np.float32),
        correct=rng.random((n, epochs)) > 0.4,
        error_norm=rng.random((n, epochs)).astype(np.float32),
    )
    return SelectionPool(features=rng.normal(size=(n, 3)).astype(np.float32), labels=labels, trace=trace)


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(SELECTORS.names()),
    n=st.integers(5, 80),
    n_classes=st.integers(1, 5),
    fraction=st.floats(0.01, 1.0),
    balance=st.booleans(),
    seed=st.integers(0, 10_000),
)
def test_selector_contract(name, n, n_classes, fraction, balance, seed):
    pool = random_pool(n, min(n_classes, n), seed)
    budget = budget_count(fraction, n)
    selector = make_selector(name, {"balance": balance})
    chosen = selector(pool, budget, np.random.default_rng(seed))
    assert len(chosen) == budget
    assert len(np.unique(chosen)) == budget
    assert chosen.min() >= 0 and chosen.max() < n
    if balance:
        quotas = class_quotas(pool.labels, budget)
        counts = {int(c): int(np.sum(pool.labels[chosen] == c)) for c in np.unique(pool.labels)}
        assert counts == quotas


@settings(max_examples=50, deadline=None)
@given(sizes=st.lists(st.integers(1, 40), min_size=1, max_size=8), data=st.data())
def test_class_quotas_are_even_and_feasible(sizes, data):
    labels = np.repeat(np.arange(len(sizes)), sizes)
    budget = data.draw(st.integers(1, len(labels)))
    quotas = class_quotas(labels, budget)
    values = np.array(list(quotas.values()))
    assert values.sum() == budget
    assert np.all(values <= np.array(sizes))
    unfilled = values[values < np.array(sizes)]
    if len(
        unfilled
    ):  # classes with spare room differ by at most one; full classes got no more than one above them
        assert unfilled.max() - unfilled.min() <= 1
        assert values.max() <= unfilled.max() + 1


def test_selection_is_deterministic_under_seed():
    pool = random_pool(60, 3, 1)
    for name in SELECTORS.names():
        first = make_selector(name)(pool, 20, np.random.default_rng(5))
        second = make_selector(name)(pool, 20, np.random.default_rng(5))
        np.testing.assert_array_equal(first, second)


def test_mrmc_fit_recovers_exponential_decay():
    epochs = np.arange(1, 11)
    q = np.array([2.0, 0.5, 1.0])
    w = np.array([0.3, 0.05, -0.1])
    trace = q[:, None] * np.exp(-w[:, None] * epochs[None, :])
    fitted_q, fitted_w = fit_loss_decay(trace)
    np.testing.assert_allclose(fitted_q, q, rtol=1e-6)
    np.testing.assert_allclose(fitted_w, w, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(loss_reduction(trace), q * (1 - np.exp(-w * 10)), rtol=1e-6)


def test_mrmc_nonneg_fit_bounds_the_rate_and_zeroes_rising_losses():
    epochs = np.arange(1, 6)
    trace = np.stack([2.0 * np.exp(-0.3 * epochs), 0.5 * np.exp(0.1 * epochs)])
    q, w = fit_loss_decay(trace, "log_linear_nonneg")
    assert w[0] == pytest.approx(0.3) and w[1] == 0.0
    assert q[1] == pytest.approx(np.exp(np.log(trace[1]).mean()))  # the bound binds: constant fit
    phi = loss_reduction(trace, "log_linear_nonneg")
    assert phi[0] == pytest.approx(2.0 * (1 - np.exp(-1.5))) and phi[1] == 0.0
    assert loss_reduction(trace)[1] < 0  # unbounded: a rising loss gives a negative reduction


def test_mrmc_keeps_the_largest_reductions_per_class():
    epochs = np.arange(1, 6)
    decay = np.array([0.5, 0.1, 0.0, 0.4, 0.05, 0.3])  # per sample
    labels = np.array([0, 0, 0, 1, 1, 1])
    trace = TrainingTrace(
        loss=np.exp(-decay[:, None] * epochs[None, :]),
        correct=np.ones((6, 5), bool),
        error_norm=np.ones((6, 5)),
    )
    pool = SelectionPool(np.zeros((6, 2), np.float32), labels, trace)
    pure = {"regularizer": False}
    np.testing.assert_array_equal(
        make_selector("mrmc", pure | {"balance": True})(pool, 2, np.random.default_rng(0)), [0, 3]
    )
    np.testing.assert_array_equal(make_selector("mrmc", pure)(pool, 2, np.random.default_rng(0)), [0, 3])
    np.testing.assert_array_equal(make_selector("mrmc", pure)(pool, 3, np.random.default_rng(0)), [0, 3, 5])


def _decay_pool(rates: list[float], labels: list[int], features: list[list[float]]) -> SelectionPool:
    epochs = np.arange(1, 6)
    loss = np.exp(-np.array(rates)[:, None] * epochs[None, :])
    n = len(rates)
    trace = TrainingTrace(loss=loss, correct=np.ones((n, 5), bool), error_norm=np.ones((n, 5)))
    return SelectionPool(np.array(features, np.float32), np.array(labels), trace)


def test_mrmc_r_regulariser_pushes_out_samples_that_c_prime_already_explains():
    # φ falls with the index: class 0 holds the four largest reductions, class 1 the two smallest
    pool = _decay_pool(
        [0.9, 0.8, 0.7, 0.6, 0.5, 0.4], [0, 0, 0, 0, 1, 1], [[0.0], [0.0], [0.0], [0.0], [1.0], [1.0]]
    )
    phi = loss_reduction(pool.trace.loss)
    assert np.all(np.diff(phi) < 0)
    rng = np.random.default_rng(0)
    np.testing.assert_array_equal(make_selector("mrmc", {"regularizer": False})(pool, 4, rng), [0, 1, 2, 3])
    # MRMC-R, ρ = 0.5: C′ = {0, 1} (class 0 only), so θ′ gives class 0 probability 1 → φ_reg = 1 there and
    # 0 for class 1; the fill score φ − 2·φ_reg ranks samples 4 and 5 (≈ φ > 0) above 2 and 3 (φ − 2 < 0)
    assert regulariser_scores(pool.features, pool.labels, np.array([0, 1])).tolist() == [1, 1, 1, 1, 0, 0]
    np.testing.assert_array_equal(make_selector("mrmc", {"rho": 0.5})(pool, 4, rng), [0, 1, 4, 5])
    # γ = 0 switches the regulariser off: back to pure MRMC
    np.testing.assert_array_equal(
        make_selector("mrmc", {"rho": 0.5, "gamma": 0.0})(pool, 4, rng), [0, 1, 2, 3]
    )


def test_mrmc_r_prefers_the_sample_the_c_prime_classifier_gets_wrong():
    # two classes on a line; sample 2 (class 0) sits among class 1 and sample 3 (class 0) among class 0
    pool = _decay_pool(
        [0.9, 0.85, 0.3, 0.31, 0.8, 0.75, 0.1],
        [0, 0, 0, 0, 1, 1, 1],
        [[-2.0], [-2.1], [2.0], [-1.9], [2.1], [1.9], [2.2]],
    )
    phi = loss_reduction(pool.trace.loss)
    assert phi[3] > phi[2]  # pure MRMC would take sample 3
    reg = regulariser_scores(pool.features, pool.labels, np.array([0, 1, 4, 5]))
    assert reg[2] < 0.5 < reg[3]  # θ′ fitted on C′ = {0, 1, 4, 5} misclassifies sample 2
    chosen = make_selector("mrmc", {"rho": 0.8})(pool, 5, np.random.default_rng(0))
    np.testing.assert_array_equal(chosen, [0, 1, 2, 4, 5])
    pure = make_selector("mrmc", {"regularizer": False})(pool, 5, np.random.default_rng(0))
    np.testing.assert_array_equal(pure, [0, 1, 3, 4, 5])


def test_every_selector_offers_the_class_balance_option():
    pool = random_pool(60, 3, 2)
    quotas = list(class_quotas(pool.labels, 12).values())
    for name in SELECTORS.names():
        assert "balance" in SELECTORS.get(name).Options.model_fields, name
        chosen = make_selector(name, {"balance": True})(pool, 12, np.random.default_rng(0))
        assert np.bincount(pool.labels[chosen], minlength=3).tolist() == quotas, name


def test_forgetting_counts_hand_case():
    correct = np.array([[1, 0, 1, 0], [1, 1, 1, 1], [0, 0, 0, 0], [0, 1, 1, 0]], dtype=bool)
    np.testing.assert_array_equal(forgetting_counts(correct), [2, 0, 4, 1])


def test_herding_first_pick_is_closest_to_the_mean():
    features = np.array([[0.0, 0.0], [10.0, 0.0], [4.0, 1.0], [-2.0, -1.0]])
    assert herd(features, 1)[0] == 2


def test_k_center_picks_farthest_point_next():
    features = np.array([[0.0], [1.0], [10.0], [4.0]])
    np.testing.assert_array_equal(k_center_greedy(features, 3, first=0), [0, 2, 3])


def test_unknown_selector_lists_valid_names():
    with pytest.raises(
        UnknownNameError, match="valid names: el2n, forgetting, herding, kcenter, mrmc, random"
    ):
        make_selector("craig")


def test_unknown_option_is_named():
    with pytest.raises(ParamsError, match=r"options\.gama"):
        make_selector("mrmc", {"gama": 1})


def test_trace_based_selector_without_trace_fails_clearly():
    pool = SelectionPool(np.zeros((4, 2), np.float32), np.array([0, 0, 1, 1]))
    with pytest.raises(PipelineError, match="needs a training trace"):
        make_selector("el2n")(pool, 2, np.random.default_rng(0))


def test_budget_larger_than_pool_fails_clearly():
    with pytest.raises(PipelineError, match="budget 9 must be between 1 and the pool size 4"):
        make_selector("random")(random_pool(4, 2, 0), 9, np.random.default_rng(0))
