"""The Lipschitz method: BRO/Cayley/SOC orthogonality, certificates, LA loss, save/load and `icml25 certify`."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
import torch
import torch.nn.functional as F

from stages.core.errors import DataValidationError
from stages.methods.lipschitz.certify import (
    average_certified_radius,
    certified_accuracy,
    empirical_lipschitz,
    jacobian_norm,
    lln_radius,
    ortho_radius,
    pgd_l2,
)
from stages.methods.lipschitz.layers import (
    BROConv2d,
    BROLinear,
    CayleyConv2d,
    LLNLinear,
    MaxMin,
    SOCConv2d,
    bro_matrix,
    bro_rank,
    cayley,
    orthogonal_linear,
)
from stages.methods.lipschitz.losses import ce_cr_loss, logit_annealing_loss
from stages.methods.lipschitz.nets import LipConvNet, LipConvNetConfig, load_lipconvnet, save_lipconvnet
from stages.methods.lipschitz.own_data import certify_files
from stages.methods.lipschitz.train import TrainOptions, evaluate, saved_bytes, train

torch.set_num_threads(1)


def gram_error(w: torch.Tensor) -> float:
    eye = torch.eye(w.shape[-1], dtype=w.dtype)
    return float((w.detach().mT.conj() @ w.detach() - eye).abs().max())


@pytest.mark.parametrize("m, n", [(8, 4), (32, 4), (64, 32)])
def test_bro_dense_is_orthogonal_with_n_minus_one_eigenvalues(m: int, n: int) -> None:
    v = torch.randn(m, n, generator=torch.Generator().manual_seed(m))
    w = bro_matrix(v, eps_ratio=0.0)
    assert gram_error(w) < 1e-5
    assert float((w - w.T).abs().max()) < 1e-5
    eigenvalues = torch.linalg.eigvalsh(w.double())
    assert int((eigenvalues < 0).sum()) == n
    assert torch.allclose(eigenvalues.abs(), torch.ones(m, dtype=torch.float64), atol=1e-5)


def test_bro_epsilon_shifts_the_reflected_eigenvalues_by_the_hand_computed_amount() -> None:
    # V = [I; 0]: VᵀV = I, ε = 1e-5, so the reflected eigenvalue is 1 − 2/(1 + ε) = (ε − 1)/(1 + ε) and σ ≤ 1.
    v = torch.zeros(6, 2, dtype=torch.float64)
    v[:2, :2] = torch.eye(2)
    w = bro_matrix(v)
    eps = 1e-5
    expected = torch.diag(torch.tensor([(eps - 1) / (1 + eps)] * 2 + [1.0] * 4, dtype=torch.float64))
    assert torch.allclose(w, expected, atol=1e-12)
    assert float(torch.linalg.matrix_norm(w, 2)) <= 1.0


def test_bro_block_equals_the_truncated_full_matrix() -> None:
    v = torch.randn(3, 10, 4, dtype=torch.complex64)
    full = bro_matrix(v)
    assert torch.allclose(bro_matrix(v, rows=3, cols=10), full[..., :3, :], atol=1e-5)
    assert torch.allclose(bro_matrix(v, rows=10, cols=5), full[..., :, :5], atol=1e-5)


def test_bro_rank_and_bad_ratio() -> None:
    assert bro_rank(64, 0.125) == 8 and bro_rank(64, 0.5) == 32 and bro_rank(4, 0.1) == 1
    with pytest.raises(ValueError, match="rank ratio"):
        bro_rank(8, 1.0)


def test_bro_conv_frequency_weights_are_orthogonal_with_n_negative_eigenvalues() -> None:
    torch.manual_seed(0)
    layer = BROConv2d(8, 8, 3, input_size=6, rank=0.5, id_init=False)
    v_hat = torch.fft.rfft2(layer.weight_v, (8, 8), norm="ortho").permute(2, 3, 0, 1)
    w = bro_matrix(v_hat, eps_ratio=0.0).reshape(-1, 8, 8)
    assert gram_error(w) < 1e-5
    eigenvalues = torch.linalg.eigvalsh(w.to(torch.complex128))
    assert ((eigenvalues < 0).sum(dim=1) == 4).all()


def test_bro_conv_identity_start_is_a_sign_flip_and_is_a_contraction() -> None:
    layer = BROConv2d(4, 4, 3, input_size=8, rank=0.5)
    x = torch.randn(2, 4, 8, 8)
    with torch.no_grad():
        y = layer(x) - layer.bias[:, None, None]
    flipped = torch.cat([-x[:, :2], x[:, 2:]], dim=1)
    assert torch.allclose(y, flipped, atol=1e-4)
    random = BROConv2d(4, 4, 3, input_size=8, rank=0.5, id_init=False)
    with torch.no_grad():
        z = random(x) - random.bias[:, None, None]
    assert (z.flatten(1).norm(dim=1) <= x.flatten(1).norm(dim=1) * (1 + 1e-5)).all()


def test_bro_conv_refuses_a_wrong_input_size() -> None:
    layer = BROConv2d(2, 4, 3, input_size=8, stride=2)
    with pytest.raises(ValueError, match="padded size"):
        layer(torch.randn(1, 2, 16, 16))


def test_cayley_is_orthogonal_and_soc_has_unit_norm() -> None:
    w = torch.randn(5, 6, 3, dtype=torch.complex64)
    q = cayley(w)
    assert q.shape == (5, 6, 3) and gram_error(q) < 1e-5
    torch.manual_seed(1)
    soc = SOCConv2d(4, 4, 3).eval()
    norm = jacobian_norm(lambda x: soc(x) - soc(torch.zeros_like(x)), torch.zeros(1, 4, 6, 6), 30)
    assert abs(norm - 1) < 1e-3
    conv = CayleyConv2d(4, 4, 3).eval()
    norm = jacobian_norm(lambda x: conv(x) - conv(torch.zeros_like(x)), torch.zeros(1, 4, 6, 6), 30)
    assert norm <= 1 + 1e-4


def test_whole_net_power_iteration_lipschitz_is_at_most_one() -> None:
    torch.manual_seed(0)
    for conv in ("bro", "cayley"):
        model = LipConvNet(LipConvNetConfig(conv=conv, width=2, id_init=False)).eval()
        assert empirical_lipschitz(model.embed, torch.rand(2, 1, 32, 32), 20) <= 1 + 1e-4


def test_maxmin_lln_and_orthogonal_linear() -> None:
    x = torch.tensor([[1.0, -2.0, 3.0, 0.5]])[:, :, None, None]
    assert MaxMin()(x).flatten().tolist() == [3.0, 0.5, 1.0, -2.0]
    lln = LLNLinear(3, 2)
    assert torch.allclose(lln.normalized_weight().norm(dim=1), torch.ones(2))
    dense = orthogonal_linear(5, 3)
    assert torch.allclose(dense.weight @ dense.weight.T, torch.eye(3), atol=1e-5)
    assert torch.allclose(BROLinear(6, 3, 0.5).weight().norm(dim=1), torch.ones(3), atol=1e-4)


def test_la_reduces_to_cross_entropy_at_neutral_settings_and_matches_a_hand_value() -> None:
    logits = torch.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 0.3]])
    labels = torch.tensor([0, 2])
    neutral = logit_annealing_loss(logits, labels, temperature=1.0, offset=0.0, beta=0.0, alpha=1.0)
    assert torch.allclose(neutral, F.cross_entropy(logits, labels))
    # one row by hand: z = (2, 0), y = 0, ξ = 1 (×√2), T = 1, β = 1, α = 1 → p_t = σ(2 − √2)
    p = 1 / (1 + math.exp(-(2 - math.sqrt(2))))
    value = logit_annealing_loss(torch.tensor([[2.0, 0.0]]), torch.tensor([0]), 1.0, 1.0, 1.0, 1.0)
    assert value.item() == pytest.approx((1 - p) * -math.log(p), rel=1e-5)


def test_ce_cr_subtracts_gamma_times_positive_radii() -> None:
    logits, labels = torch.tensor([[1.0, 0.0]]), torch.tensor([0])
    loss = ce_cr_loss(logits, labels, torch.tensor([0.4]), gamma=0.5)
    assert loss.item() == pytest.approx(F.cross_entropy(logits, labels).item() - 0.2)
    assert ce_cr_loss(logits, labels, torch.tensor([-3.0])).item() == pytest.approx(
        F.cross_entropy(logits, labels).item()
    )


def test_radii_by_hand() -> None:
    logits = torch.tensor([[3.0, 1.0, 0.0]])
    assert ortho_radius(logits, torch.tensor([0])).item() == pytest.approx(2 / math.sqrt(2))
    weight = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    # margins 2 (‖w0 − w1‖ = √2) and 3 (‖w0 − w2‖ = 2): min(2/√2, 3/2) = 1.4142
    assert lln_radius(logits, torch.tensor([0]), weight).item() == pytest.approx(math.sqrt(2))
    assert lln_radius(logits, torch.tensor([0]), weight, lipschitz=2.0).item() == pytest.approx(
        math.sqrt(2) / 2
    )


def test_certified_accuracy_and_acr_by_hand() -> None:
    correct = np.array([True, True, False, True])
    radii = np.array([0.5, 0.1, 0.9, 2.0])
    assert certified_accuracy(correct, radii, [0.2, 1.0]) == [0.5, 0.25]
    assert average_certified_radius(correct, radii) == pytest.approx((0.5 + 0.1 + 1.0) / 4)


def blobs(n: int = 80, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    labels = torch.arange(n) % 2
    images = torch.rand(n, 1, 32, 32, generator=generator) * 0.3
    images[labels == 1, :, 8:24, 8:24] += 0.6
    return images.clamp(0, 1), labels


@pytest.fixture(scope="module")
def trained_model() -> LipConvNet:
    torch.manual_seed(0)
    images, labels = blobs()
    model = LipConvNet(LipConvNetConfig(conv="bro", width=2, classes=2, mean=[0.3], std=[0.3]))
    train(model, images, labels, TrainOptions(loss="la", epochs=3, batch=20, lr=0.05), seed=0)
    return model


def test_no_certified_point_is_flipped_by_pgd_within_its_radius(trained_model: LipConvNet) -> None:
    images, labels = blobs(40, seed=1)
    result = evaluate(trained_model, images, labels)
    rows = np.flatnonzero(result.radii > 0)
    assert len(rows) > 10
    radius = torch.as_tensor(result.radii[rows], dtype=torch.float32) * (1 - 1e-4)
    predicted = torch.as_tensor(result.predictions[rows])
    assert not pgd_l2(trained_model, images[rows], predicted, radius, steps=10).any()
    # the same attack with twice the radius can flip points: the test can fail
    assert pgd_l2(trained_model, images[rows], predicted, radius * 20, steps=10).any()


def test_save_load_roundtrip_and_errors(trained_model: LipConvNet, tmp_path) -> None:
    save_lipconvnet(trained_model, tmp_path / "m")
    loaded = load_lipconvnet(tmp_path / "m")
    x = torch.rand(3, 1, 32, 32)
    assert torch.allclose(loaded(x), trained_model.eval()(x), atol=1e-6)
    with pytest.raises(DataValidationError, match=r"config\.json"):
        load_lipconvnet(tmp_path / "missing")
    (tmp_path / "m" / "config.json").write_text('{"conv": "lot"}')
    with pytest.raises(DataValidationError, match="not a LipConvNet config"):
        load_lipconvnet(tmp_path / "m")


def test_saved_bytes_grow_with_batch() -> None:
    layer = BROConv2d(4, 4, 3, input_size=8)
    assert saved_bytes(layer, torch.randn(8, 4, 8, 8)) > saved_bytes(layer, torch.randn(2, 4, 8, 8)) > 0


def test_certify_files_writes_a_report_and_refuses_bad_input(trained_model: LipConvNet, tmp_path) -> None:
    save_lipconvnet(trained_model, tmp_path / "model")
    images, labels = blobs(12, seed=2)
    table = tmp_path / "images.parquet"
    flat = images[:, :, 2:30, 2:30].reshape(12, -1).numpy()  # 28 × 28: padded by the command
    pl.DataFrame({"image": flat.tolist(), "label": labels.numpy()}).write_parquet(table)
    report = certify_files(tmp_path / "model", table, tmp_path / "out", [0.1, 0.2])
    assert report["summary"]["images"] == 12
    assert sorted(p.name for p in (tmp_path / "out").iterdir() if not p.name.startswith(".")) == [
        "certified_accuracy.png",
        "radii.parquet",
        "report.md",
        "summary.json",
    ]
    bad = [
        ({"image": (flat * 255).tolist(), "label": labels.numpy()}, "in \\[0, 1\\]"),
        ({"image": flat[:, :100].tolist(), "label": labels.numpy()}, "values per image"),
        ({"image": flat.tolist(), "label": labels.numpy() + 5}, "labels must lie"),
        ({"pixels": flat.tolist(), "label": labels.numpy()}, "no column 'image'"),
    ]
    for index, (columns, message) in enumerate(bad):
        path = tmp_path / f"bad{index}.parquet"
        pl.DataFrame(columns).write_parquet(path)
        with pytest.raises(DataValidationError, match=message):
            certify_files(tmp_path / "model", path, tmp_path / f"never{index}", [0.1])
        assert not (tmp_path / f"never{index}").exists()
    with pytest.raises(DataValidationError, match="--epsilons"):
        certify_files(tmp_path / "model", table, tmp_path / "never", [0.0])
