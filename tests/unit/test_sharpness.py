"""The sharpness tooling: exact and Lanczos top eigenvalues, the tracker, and the minimalist closed form."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from stages.methods.sharpness.hessian import (
    exact_top_eigenvalue,
    flat_loss,
    lanczos_top_eigenvalue,
    top_eigenvalue,
    top_hessian_eigenvalue,
)
from stages.methods.sharpness.theory import (
    balanced_minimum,
    balanced_minimum_sharpness,
    check_batch_size,
    check_depth,
    check_step_size,
    dataset_difficulty,
    sharpness_bounds,
    two_layer_minimum_v2,
)
from stages.methods.sharpness.tracker import SharpnessTracker


@pytest.fixture(autouse=True)
def _float64_default():
    """These checks run in float64; the default is restored so no other test module inherits it."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)


def minimalist_loss(x: torch.Tensor, y: torch.Tensor, depth: int):
    """L(u, v) = (1/2N)‖X u ∏v − y‖² on the flat vector (u, v)."""
    d = x.shape[1]

    def fn(theta: torch.Tensor) -> torch.Tensor:
        u, v = theta[:d], theta[d:]
        return 0.5 * ((x @ u * torch.prod(v) - y) ** 2).mean()

    return fn


def test_exact_and_lanczos_match_a_quadratics_top_eigenvalue():
    generator = torch.Generator().manual_seed(0)
    basis = torch.linalg.qr(torch.randn(40, 40, generator=generator))[0]
    eigenvalues = torch.linspace(-3.0, 7.5, 40)
    matrix = basis @ torch.diag(eigenvalues) @ basis.T

    def quadratic(theta):
        return 0.5 * theta @ matrix @ theta

    point = torch.randn(40, generator=generator)
    assert exact_top_eigenvalue(quadratic, point).value == pytest.approx(7.5, rel=1e-10)
    estimate = lanczos_top_eigenvalue(quadratic, point, tol=1e-8)
    assert estimate.converged and estimate.value == pytest.approx(7.5, rel=1e-8)


def test_exact_matches_autograd_hessian_on_the_minimalist_model():
    generator = torch.Generator().manual_seed(1)
    x, y = torch.randn(12, 7, generator=generator), torch.sign(torch.randn(12, generator=generator))
    fn = minimalist_loss(x, y, 3)
    theta = 0.5 * torch.randn(7 + 2, generator=generator)
    reference = torch.linalg.eigvalsh(torch.autograd.functional.hessian(fn, theta))[-1]
    assert exact_top_eigenvalue(fn, theta).value == pytest.approx(float(reference), rel=1e-10)
    assert top_eigenvalue(fn, theta, method="lanczos").value == pytest.approx(float(reference), rel=1e-8)


def test_lanczos_matches_exact_on_a_small_mlp_to_the_stated_tolerance():
    generator = torch.Generator().manual_seed(2)
    model = torch.nn.Sequential(
        torch.nn.Linear(6, 16),
        torch.nn.Tanh(),
        torch.nn.Linear(16, 16),
        torch.nn.Tanh(),
        torch.nn.Linear(16, 1),
    )
    model = model.double()
    inputs, targets = torch.randn(30, 6, generator=generator), torch.randn(30, 1, generator=generator)
    loss = torch.nn.functional.mse_loss
    exact = top_hessian_eigenvalue(model, loss, inputs, targets, method="exact")
    lanczos = top_hessian_eigenvalue(model, loss, inputs, targets, method="lanczos", tol=1e-6)
    assert exact.params == lanczos.params == sum(p.numel() for p in model.parameters())
    assert lanczos.converged
    # ARPACK stops at residual ≤ tol·|θ|; the eigenvalue error is of order residual², well inside tol
    assert abs(lanczos.value - exact.value) <= 1e-6 * abs(exact.value)


def test_the_hand_computed_balanced_minimum_lies_in_the_bounds():
    # X = diag(2, 1), y = (2, 1): σ = (2, 1), d = (2, 1), Q = 1 + 1 = 2, N = 2, D = 2
    x, y = np.array([[2.0, 0.0], [0.0, 1.0]]), np.array([2.0, 1.0])
    assert dataset_difficulty(x, y) == pytest.approx(2.0)
    # Hessian at the balanced minimum = (1/N)(√Q XXᵀ + yyᵀ/√Q) = [[6/√2, 1/√2], [1/√2, 1.5/√2]]
    a, b, c = 6 / math.sqrt(2), 1.5 / math.sqrt(2), 1 / math.sqrt(2)
    by_hand = (a + b) / 2 + math.sqrt(((a - b) / 2) ** 2 + c**2)
    assert balanced_minimum_sharpness(x, y, 2) == pytest.approx(by_hand)
    u, v = balanced_minimum(x, y, 2)
    theta = torch.from_numpy(np.concatenate([u, v]))
    measured = exact_top_eigenvalue(minimalist_loss(torch.from_numpy(x), torch.from_numpy(y), 2), theta).value
    assert measured == pytest.approx(by_hand, rel=1e-10)
    bounds = sharpness_bounds(x, y, 2)
    assert bounds.predicted == pytest.approx(4 * math.sqrt(2) / 2)  # σ₁²Q^{1/2}/N
    assert bounds.lower == pytest.approx((4 * math.sqrt(2) + 4 / math.sqrt(2)) / 2)
    assert bounds.upper == pytest.approx((4 * math.sqrt(2) + 5 / math.sqrt(2)) / 2)
    assert bounds.lower < measured < bounds.upper


@pytest.mark.parametrize("depth", [1, 2, 3, 5])
def test_bounds_contain_the_exact_sharpness_at_the_balanced_minimum(depth):
    rng = np.random.default_rng(depth)
    x, y = rng.standard_normal((8, 15)), rng.choice([-1.0, 1.0], 8)
    u, v = balanced_minimum(x, y, depth)
    assert np.allclose(x @ u * np.prod(v), y)
    theta = torch.from_numpy(np.concatenate([u, v]))
    measured = exact_top_eigenvalue(
        minimalist_loss(torch.from_numpy(x), torch.from_numpy(y), depth), theta
    ).value
    bounds = sharpness_bounds(x, y, depth)
    assert measured == pytest.approx(balanced_minimum_sharpness(x, y, depth), rel=1e-9)
    assert bounds.lower * (1 - 1e-12) <= measured <= bounds.upper * (1 + 1e-12)


def test_two_layer_minimum_without_imbalance_is_balanced():
    assert two_layer_minimum_v2(4.0, 0.0) == pytest.approx(2.0)  # v² = √Q
    assert two_layer_minimum_v2(4.0, 1.0) < 2.0  # imbalance C > 0 lowers v², hence S


def test_tracker_measures_at_its_cadence_and_records_the_threshold():
    model = torch.nn.Linear(3, 1).double()
    inputs, targets = torch.randn(10, 3), torch.randn(10, 1)
    tracker = SharpnessTracker(every=3, eta=0.1)
    recorded = [tracker(step, model, torch.nn.functional.mse_loss, inputs, targets) for step in range(7)]
    assert [record["step"] for record in tracker.records] == [0, 3, 6]
    assert sum(record is not None for record in recorded) == 3
    assert tracker.records[0]["threshold"] == pytest.approx(20.0)
    # linear least squares: Hessian (2/N)[X 1]ᵀ[X 1], constant in the parameters
    design = torch.cat([inputs, torch.ones(10, 1)], dim=1)
    expected = float(torch.linalg.eigvalsh(2 * design.T @ design / 10)[-1])
    assert tracker.records[-1]["sharpness"] == pytest.approx(expected)


def test_flat_loss_leaves_the_model_untouched():
    model = torch.nn.Linear(4, 2).double()
    before = [p.detach().clone() for p in model.parameters()]
    fn, theta = flat_loss(model, torch.nn.functional.mse_loss, torch.randn(5, 4), torch.randn(5, 2))
    fn(theta + 1.0)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))


@pytest.mark.parametrize(
    ("call", "key"),
    [
        (lambda: check_depth(0), "depth = 0"),
        (lambda: check_step_size(0.0), "eta = 0.0"),
        (lambda: check_step_size(-1.0, key="lr"), "lr = -1.0"),
        (lambda: check_batch_size(11, 10), "batch_size = 11"),
        (lambda: SharpnessTracker(every=0), "every = 0"),
        (lambda: sharpness_bounds(np.eye(2), np.ones(2), 0), "depth = 0"),
    ],
)
def test_bad_arguments_fail_naming_them(call, key):
    with pytest.raises(ValueError, match=key):
        call()
