"""f-divergence losses (stages.methods.losses): Algorithm 1 against closed forms and the entmax library."""

from __future__ import annotations

import math
import re
from pathlib import Path

import entmax
import pytest
import torch

from stages.methods.losses import (
    DEFAULT_TOLERANCE,
    FenchelYoungLoss,
    divergence,
    f_softargmax,
    fenchel_young_index_loss,
    fenchel_young_loss,
    solve,
)

ALL_F = [
    ("kl", None),
    ("reverse_kl", None),
    ("alpha", 0.5),
    ("alpha", 1.5),
    ("alpha", 2.0),
    ("alpha", 3.0),
    ("chi2", None),
    ("js", None),
    ("hellinger", None),
]
SPARSE = {("alpha", 1.5), ("alpha", 2.0), ("alpha", 3.0), ("chi2", None)}
README = Path(__file__).resolve().parents[2] / "stages/papers/fdiv_losses/README.md"


def scores(rows=6, classes=9, scale=2.0, dtype=torch.float64, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return (torch.randn(rows, classes, generator=generator) * scale).to(dtype)


def one_hot(rows, classes, dtype=torch.float64):
    return torch.nn.functional.one_hot(torch.arange(rows) % classes, classes).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_matches_closed_forms_and_entmax(dtype):
    theta = scores(dtype=dtype)
    cases = [
        (divergence("kl"), torch.softmax(theta, -1)),
        (divergence("alpha", 2.0), entmax.sparsemax(theta, -1)),
        (divergence("alpha", 1.5), entmax.entmax15(theta, -1)),
        (divergence("alpha", 1.3), entmax.entmax_bisect(theta.double(), 1.3, n_iter=100).to(dtype)),
    ]
    for div, reference in cases:
        assert (f_softargmax(theta, div) - reference).abs().max() <= 1e-5, div.name


def test_chi2_is_sparsemax_at_half_scale():
    theta = scores()
    assert torch.allclose(f_softargmax(theta, divergence("chi2")), entmax.sparsemax(theta / 2, -1), atol=1e-8)


@pytest.mark.parametrize(("name", "alpha"), ALL_F)
def test_outputs_on_simplex_and_zeros_only_when_sparse(name, alpha):
    p = f_softargmax(scores(scale=3.0), divergence(name, alpha))
    assert (p >= 0).all() and torch.allclose(p.sum(-1), torch.ones(6, dtype=p.dtype), atol=1e-6)
    assert bool((p == 0).any()) == ((name, alpha) in SPARSE)


@pytest.mark.parametrize(("name", "alpha"), ALL_F)
def test_loss_nonnegative_zero_at_p_and_gradient(name, alpha):
    div, theta = divergence(name, alpha), scores()
    p = f_softargmax(theta, div)
    assert fenchel_young_loss(theta, p, div).abs().max() < 1e-9
    smoothed = 0.9 * one_hot(6, 9) + 0.1 / 9
    assert (fenchel_young_loss(theta, smoothed, div) >= -1e-12).all()
    leaf = theta.clone().requires_grad_()
    fenchel_young_loss(leaf, smoothed, div).sum().backward()
    assert torch.allclose(leaf.grad, p - smoothed, atol=1e-9)
    assert torch.autograd.gradcheck(
        lambda t: fenchel_young_loss(t, smoothed, div), (leaf.detach().requires_grad_(),)
    )


@pytest.mark.parametrize(("name", "alpha"), ALL_F)
def test_softargmax_jacobian_gradcheck(name, alpha):
    div = divergence(name, alpha)
    theta = scores(rows=3, classes=5).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: f_softargmax(t, div, iterations=60), (theta,), atol=1e-6)


def test_kl_loss_is_cross_entropy_for_unit_and_uniform_q():
    theta, labels = scores(), torch.arange(6) % 9
    expected = torch.nn.functional.cross_entropy(theta, labels, reduction="none")
    for q in (None, torch.full((9,), 1 / 9, dtype=torch.float64)):
        loss = fenchel_young_loss(theta, one_hot(6, 9), divergence("kl"), q=q)
        assert torch.allclose(loss, expected, atol=1e-9)


def test_alpha_losses_are_entmax_losses():
    theta, labels, y = scores(), torch.arange(6) % 9, one_hot(6, 9)
    sparsemax = entmax.SparsemaxLoss(reduction="none")(theta, labels)
    entmax15 = entmax.Entmax15Loss(reduction="none")(theta, labels)
    assert torch.allclose(fenchel_young_loss(theta, y, divergence("alpha", 2.0)), sparsemax, atol=1e-5)
    assert torch.allclose(fenchel_young_loss(theta, y, divergence("alpha", 1.5)), entmax15, atol=1e-5)


@pytest.mark.parametrize("alpha", [0.5, 1.5, 2.0])
def test_constant_q_is_unit_q_with_rescaled_scores(alpha):
    """q = c·1 equals unit q with θ scaled by c^{α−1}; so uniform 1/k differs from unit for α ≠ 1."""
    theta, c = scores(classes=8), 1 / 8
    div = divergence("alpha", alpha)
    uniform = f_softargmax(theta, div, q=torch.full((8,), c, dtype=torch.float64), iterations=60)
    assert torch.allclose(uniform, f_softargmax(theta * c ** (alpha - 1), div, iterations=60), atol=1e-9)
    assert (uniform - f_softargmax(theta, div)).abs().max() > 1e-3


def test_non_uniform_q():
    theta = scores()
    q = torch.linspace(0.2, 2.0, 9, dtype=torch.float64)
    assert torch.allclose(f_softargmax(theta, divergence("kl"), q=q), torch.softmax(theta + q.log(), -1))
    for name, alpha in ALL_F:
        div = divergence(name, alpha)
        p = f_softargmax(theta, div, q=q, iterations=60)
        assert torch.allclose(p.sum(-1), torch.ones(6, dtype=p.dtype))
        assert fenchel_young_loss(theta, p, div, q=q).abs().max() < 1e-8
        leaf = theta.clone().requires_grad_()
        assert torch.autograd.gradcheck(lambda t, div=div: f_softargmax(t, div, q=q, iterations=60), (leaf,))


def test_temperature_divides_scores_and_gradient():
    theta, y, div = scores(), one_hot(6, 9), divergence("alpha", 1.5)
    assert torch.allclose(f_softargmax(theta, div, temperature=2.0), f_softargmax(theta / 2, div))
    leaf = theta.clone().requires_grad_()
    fenchel_young_loss(leaf, y, div, temperature=2.0).sum().backward()
    assert torch.allclose(leaf.grad, (f_softargmax(theta / 2, div) - y) / 2)


@pytest.mark.parametrize(("name", "alpha"), ALL_F)
def test_adversarial_inputs_give_finite_outputs(name, alpha):
    div = divergence(name, alpha)
    huge = scores(scale=1e4, dtype=torch.float32)
    ties = torch.zeros(2, 5)
    masked = scores(dtype=torch.float32).masked_fill(torch.arange(9) % 3 == 0, -math.inf)
    for theta in (huge, ties, masked, scores(rows=1), torch.tensor([[3.0]])):
        p = f_softargmax(theta, div)
        assert torch.isfinite(p).all() and torch.allclose(
            p.sum(-1), torch.ones(len(p), dtype=p.dtype), atol=1e-5
        )
    assert torch.allclose(f_softargmax(ties, div), torch.full((2, 5), 0.2))
    assert (f_softargmax(masked, div)[:, ::3] == 0).all()
    labels = torch.tensor([1, 2, 4, 5, 7, 8])
    loss = FenchelYoungLoss(name, alpha)(masked, labels)
    assert torch.isfinite(loss) or name == "reverse_kl"


def test_bad_inputs_raise_naming_the_key():
    with pytest.raises(ValueError, match="alpha"):
        divergence("alpha", 0.0)
    with pytest.raises(ValueError, match="alpha"):
        divergence("alpha", -1.0)
    with pytest.raises(ValueError, match="divergence: unknown f 'tsallis'"):
        divergence("tsallis")
    with pytest.raises(ValueError, match="theta"):
        f_softargmax(torch.tensor([[0.0, math.nan]]), divergence("kl"))
    with pytest.raises(ValueError, match="theta"):
        f_softargmax(torch.full((1, 3), -math.inf), divergence("kl"))
    with pytest.raises(ValueError, match="q"):
        f_softargmax(scores(), divergence("kl"), q=torch.zeros(9))
    with pytest.raises(ValueError, match="iterations"):
        f_softargmax(scores(), divergence("kl"), iterations=0)
    with pytest.raises(ValueError, match="target"):
        FenchelYoungLoss()(scores(), torch.tensor([0, 1, 2, 3, 4, 9]))


def test_module_matches_cross_entropy_options():
    """KL is cross-entropy minus the entropy of the (smoothed) target: the D_f(y, q) term of the loss."""
    theta, labels = scores(rows=8), torch.tensor([0, 1, -100, 3, 4, 5, -100, 7])
    kept = labels != -100
    for smoothing in (0.0, 0.1):
        y = torch.full((9,), smoothing / 9, dtype=torch.float64)
        y[0] += 1 - smoothing
        entropy = -torch.special.xlogy(y, y).sum()
        offsets = {"mean": entropy, "sum": entropy * kept.sum(), "none": entropy * kept}
        for reduction in ("mean", "sum", "none"):
            ours = FenchelYoungLoss("kl", reduction=reduction, label_smoothing=smoothing)(theta, labels)
            torch_ce = torch.nn.CrossEntropyLoss(reduction=reduction, label_smoothing=smoothing)(
                theta, labels
            )
            assert torch.allclose(ours, torch_ce - offsets[reduction], atol=1e-9), (smoothing, reduction)
    module = FenchelYoungLoss("alpha", alpha=1.5, q=torch.ones(9) * 2)
    assert module.config()["q"] == [2.0] * 9 and FenchelYoungLoss().config()["q"] == "unit"


def test_readme_example_runs():
    text = README.read_text()
    block = re.search(r"```python\n(.*?)```", text.split("## Use the loss in your own model")[1], re.S)
    assert block is not None
    exec(compile(block.group(1), str(README), "exec"), {})


def exact_weighted_sparsemax(theta, q):
    """α = 2 with a reference measure, exactly: p_j = q_j [1 + θ_j − τ]_+ with Σp = 1 (sort, then solve)."""
    order = theta.argsort(descending=True)
    t, w = theta[order], q[order]
    for k in range(1, len(t) + 1):
        tau = ((w[:k] * (1 + t[:k])).sum() - 1) / w[:k].sum()
        if k == len(t) or 1 + t[k] - tau <= 0:
            break
    return q * (1 + theta - tau).clamp(min=0), tau


def test_bisection_converges_with_a_tiny_reference_mass_at_the_top():
    """α = 2, q = 1e-12 at the top score: the bracket [max_j θ_j − f′(1/q_j), −f′(1/Σq)] stays narrow."""
    theta = scores(rows=1, classes=10)[0]
    q = torch.ones(10, dtype=torch.float64)
    q[theta.argmax()] = 1e-12
    div = divergence("alpha", 2.0)
    solution = solve(theta[None], div, q=q)
    assert (solution.p[0] - exact_weighted_sparsemax(theta, q)[0]).abs().max() < 1e-8
    assert solution.width.max() <= DEFAULT_TOLERANCE


@pytest.mark.parametrize(("name", "alpha"), [("alpha", 2.0), ("alpha", 1.5), ("alpha", 3.0)])
def test_a_wide_bracket_is_halved_until_below_tol(name, alpha):
    """q = 1e-12 everywhere puts the bracket ~1e12 wide: 30 halvings leave ~1e3; the count adapts to tol."""
    theta, c = scores(rows=3, classes=10), 1e-12
    q, div = torch.full((10,), c, dtype=torch.float64), divergence(name, alpha)
    expected = f_softargmax(theta * c ** (alpha - 1), div, iterations=60)  # q = c·1 ≡ unit q, rescaled θ
    for tol in (1e-6, 1e-10):
        solution = solve(theta, div, q=q, tol=tol)
        resolution = 4 * torch.finfo(theta.dtype).eps * solution.tau.abs()  # τ ≈ −1e11 for α = 2
        assert solution.halvings > 30 and (solution.width <= resolution.clamp(min=tol)).all()
        assert (solution.p - expected).abs().max() < 1e-9
    if name == "alpha" and alpha == 2.0:  # τ against the exact root; a loose tol leaves it ~400 off
        exact_tau = torch.stack([exact_weighted_sparsemax(row, q)[1] - row.max() for row in theta])
        assert ((solve(theta, div, q=q).tau - exact_tau).abs() <= resolution.clamp(min=1e-6)).all()
        assert (solve(theta, div, q=q, tol=1e3).tau - exact_tau).abs().max() > 1.0


@pytest.mark.parametrize(("name", "alpha"), [("kl", None), ("alpha", 1.5), ("chi2", None), ("js", None)])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_all_ignored_batch_matches_torch(name, alpha, smoothing):
    """Every label ignored: mean is NaN, sum 0, none zeros, the gradient zero (torch's CrossEntropyLoss)."""
    labels = torch.full((4,), -100)
    for reduction in ("mean", "sum", "none"):
        ours_leaf, torch_leaf = scores(rows=4).requires_grad_(), scores(rows=4).requires_grad_()
        ours = FenchelYoungLoss(name, alpha, reduction=reduction, label_smoothing=smoothing)(
            ours_leaf, labels
        )
        reference = torch.nn.CrossEntropyLoss(reduction=reduction, label_smoothing=smoothing)(
            torch_leaf, labels
        )
        assert ours.shape == reference.shape and torch.equal(ours.isnan(), reference.isnan())
        assert torch.allclose(ours.nan_to_num(), reference.nan_to_num())
        ours.sum().backward(), reference.sum().backward()
        assert torch.equal(ours_leaf.grad, torch_leaf.grad)


def test_class_dimension_one_like_cross_entropy():
    """(N, C, d1, d2) scores, (N, d1, d2) labels with ignored positions; (C) scores with a scalar label."""
    generator = torch.Generator().manual_seed(1)
    theta = torch.randn(3, 5, 4, 2, generator=generator, dtype=torch.float64)
    labels = torch.randint(0, 5, (3, 4, 2), generator=generator)
    labels[0, 1, 1] = labels[2, 0, 0] = -100
    for reduction in ("mean", "sum", "none"):
        ours = FenchelYoungLoss("kl", reduction=reduction)(theta, labels)
        reference = torch.nn.CrossEntropyLoss(reduction=reduction)(theta, labels)
        assert ours.shape == reference.shape and torch.allclose(ours, reference, atol=1e-9), reduction
    teacher = torch.softmax(torch.randn(3, 5, 4, 2, generator=generator, dtype=torch.float64), dim=1)
    entropy = -torch.special.xlogy(teacher, teacher).sum(dim=1)
    ours = FenchelYoungLoss("kl", reduction="none")(theta, teacher)
    reference = torch.nn.CrossEntropyLoss(reduction="none")(theta, teacher)
    assert torch.allclose(ours, reference - entropy, atol=1e-9)
    single = FenchelYoungLoss("kl")(theta[0, :, 0, 0], labels[1, 0, 0])
    assert torch.allclose(single, torch.nn.CrossEntropyLoss()(theta[0, :, 0, 0], labels[1, 0, 0]))
    with pytest.raises(ValueError, match=r"target: class indices .* classes on dim 1"):
        FenchelYoungLoss("alpha", 1.5)(torch.randn(2, 7, 5), torch.randint(0, 5, (2, 7)))  # (B, T, V) layout
    with pytest.raises(ValueError, match="target: probabilities must have input's shape"):
        FenchelYoungLoss("kl")(theta, teacher[:, :, :, 0])


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_precision_teacher_is_renormalised(dtype):
    theta = scores(rows=16, classes=50, dtype=torch.float32)
    teacher = torch.softmax(scores(rows=16, classes=50, seed=3).to(dtype), dim=-1)
    assert (teacher.float().sum(-1) - 1).abs().max() > 1e-4  # the old 1e-4 check refused it
    normalised = teacher.float() / teacher.float().sum(-1, keepdim=True)
    for name, alpha in (("kl", None), ("alpha", 1.5)):
        ours = FenchelYoungLoss(name, alpha, reduction="none")(theta, teacher)
        assert torch.allclose(
            ours, FenchelYoungLoss(name, alpha, reduction="none")(theta, normalised), atol=1e-6
        )
    with pytest.raises(ValueError, match="target: every row must sum to 1"):
        FenchelYoungLoss()(theta, teacher.float() * 1.05)


@pytest.mark.parametrize(("name", "alpha"), ALL_F)
def test_index_path_matches_the_one_hot_loss(name, alpha):
    """Class indices (no one-hot matrix) give the value and gradient of the loss against the one-hot y."""
    div, labels = divergence(name, alpha), torch.tensor([0, 3, 8, 2, 5, 7])
    theta = scores(scale=3.0).masked_fill(torch.arange(9) == 4, -math.inf)
    q = torch.linspace(0.5, 2.0, 9, dtype=torch.float64)
    for reference, temperature in ((None, 1.0), (q, 2.0)):
        leaf, dense_leaf = theta.clone().requires_grad_(), theta.clone().requires_grad_()
        value = fenchel_young_index_loss(leaf, labels, div, q=reference, temperature=temperature)
        dense = fenchel_young_loss(
            dense_leaf, torch.eye(9, dtype=torch.float64)[labels], div, q=reference, temperature=temperature
        )
        finite = torch.isfinite(dense)
        assert torch.equal(finite, torch.isfinite(value)) and torch.allclose(
            value[finite], dense[finite], atol=1e-9
        )
        value[finite].sum().backward(), dense[finite].sum().backward()
        assert torch.allclose(leaf.grad, dense_leaf.grad, atol=1e-12)
    assert fenchel_young_index_loss(theta, torch.tensor([4] * 6), div).isposinf().all()  # masked label
