"""The diffusion method: EDM preconditioning and loss, the sampler's grid and steps, SFBD's loop, distances,
and the own-data checks (`icml25 deconvolve`)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
import torch

from stages.core.errors import DataValidationError
from stages.methods.diffusion.edm import (
    EMA,
    Precond,
    TrainOptions,
    c_in,
    c_noise,
    c_out,
    c_skip,
    edm_loss,
    loss_weight,
    train_edm,
)
from stages.methods.diffusion.metrics import (
    frechet_distance,
    frechet_from_moments,
    kid,
    mmd_rbf,
    wasserstein2,
)
from stages.methods.diffusion.nets import MLPDenoiser, SmallUNet, build_net
from stages.methods.diffusion.own_data import DeconvolveOptions, check_inputs, deconvolve_files, read_array
from stages.methods.diffusion.sampler import cut_grid, denoise_from, heun, karras_grid, sample
from stages.methods.diffusion.sfbd import SFBDOptions, sfbd

SIGMAS = torch.tensor([0.002, 0.1, 0.5, 1.0, 3.0, 80.0], dtype=torch.float64)


class ZeroNet(torch.nn.Module):
    def forward(self, x, c_noise):
        return torch.zeros_like(x)


def test_preconditioning_identities():
    sd = 0.5
    assert torch.allclose(c_skip(SIGMAS) + c_out(SIGMAS) ** 2 / sd**2, torch.ones_like(SIGMAS))
    assert torch.allclose(c_in(SIGMAS) ** 2 * (SIGMAS**2 + sd**2), torch.ones_like(SIGMAS))
    assert torch.allclose(loss_weight(SIGMAS), 1 / c_out(SIGMAS) ** 2)
    assert torch.allclose(c_noise(SIGMAS), SIGMAS.log() / 4)
    assert float(c_skip(torch.tensor(0.0))) == 1.0 and float(c_out(torch.tensor(0.0))) == 0.0
    x = torch.randn(4, 3, dtype=torch.float64)
    denoised = Precond(ZeroNet())(x, 2.0)  # F = 0: D(x; σ) = c_skip(σ) x
    assert torch.allclose(denoised, x * 0.25 / (4 + 0.25))


def test_loss_weighting_matches_a_hand_computation():
    class Offset(torch.nn.Module):  # D(x + n; σ) = x + 1 for the batch below, whatever σ
        sigma_data = 0.5

        def forward(self, noisy, sigma):
            return batch + 1.0

    batch = torch.randn(8, 4)
    loss = edm_loss(Offset(), batch, torch.Generator().manual_seed(3))
    sigma = (torch.randn((8, 1), generator=torch.Generator().manual_seed(3)) * 1.2 - 1.2).exp()
    assert float(loss) == pytest.approx(float(loss_weight(sigma).mean()), rel=1e-6)


def test_grid_matches_edm_and_the_cut_sets_the_node_to_sigma():
    grid = karras_grid(40)
    assert (
        len(grid) == 41
        and grid[0] == pytest.approx(80)
        and grid[39] == pytest.approx(0.002)
        and grid[40] == 0
    )
    assert grid[22] == pytest.approx(1.3824, abs=1e-4)  # the card's σ is node 22
    cut = cut_grid(grid, 0.59)
    smallest_above = grid[grid >= 0.59].min()
    start = int(np.flatnonzero(grid == smallest_above)[0])
    assert cut[0] == 0.59 and np.array_equal(cut[1:], grid[start + 1 :])
    assert np.array_equal(cut_grid(grid, float(grid[22])), grid[22:])
    with pytest.raises(ValueError, match="above"):
        cut_grid(grid, 100.0)
    with pytest.raises(ValueError, match="positive"):
        cut_grid(grid, 0.0)


def test_heun_and_the_final_euler_step_by_hand():
    a = 0.3  # D(x; σ) = a x: dx/dσ = (1 − a) x / σ
    x0 = torch.tensor([[2.0]], dtype=torch.float64)
    sigmas = np.array([1.0, 0.5, 0.0])
    d0 = (1 - a) * 2.0 / 1.0
    euler = 2.0 + (0.5 - 1.0) * d0
    d1 = (1 - a) * euler / 0.5
    heun_x = 2.0 + (0.5 - 1.0) * (d0 + d1) / 2
    last = heun_x + (0.0 - 0.5) * (1 - a) * heun_x / 0.5  # Euler to σ = 0 (no correction)
    result = heun(lambda x, s: a * x, x0, sigmas)
    assert float(result) == pytest.approx(last, rel=1e-12)


def test_an_oracle_denoiser_of_one_point_brings_every_start_to_that_point():
    point = torch.tensor([0.3, -0.7, 0.1])

    def oracle(x, sigma):
        return point.expand_as(x)

    generator = torch.Generator().manual_seed(0)
    samples = sample(oracle, 50, (3,), generator)
    assert torch.allclose(samples, point.expand(50, 3), atol=1e-5)
    y = point + 0.59 * torch.randn(20, 3, generator=generator)
    assert torch.allclose(denoise_from(oracle, y, 0.59), point.expand(20, 3), atol=1e-5)


def test_ema_follows_edm_halflife_rule():
    model = torch.nn.Linear(1, 1)
    ema = EMA(model, halflife_kimg=500, rampup=0.05)
    assert ema.beta(256 * 100, 256) == pytest.approx(0.5 ** (256 / (0.05 * 256 * 100)))
    assert ema.beta(10**9, 256) == pytest.approx(0.5 ** (256 / 500_000))
    with torch.no_grad():
        model.weight.fill_(1.0)
        ema.model.weight.fill_(0.0)
    ema.update(model, 256, 256)  # half-life 12.8 images < one batch: beta tiny
    assert float(ema.model.weight) == pytest.approx(1 - 0.5 ** (256 / 12.8))


def test_training_reduces_the_loss_and_is_reproducible():
    data = np.random.default_rng(0).uniform(-1, 1, (200, 4)).astype(np.float32)

    def fit():
        torch.manual_seed(0)
        return train_edm(Precond(MLPDenoiser(4, width=16)), data, TrainOptions(steps=30, batch=32), seed=1)

    first, second = fit(), fit()
    for a, b in zip(first.parameters(), second.parameters(), strict=True):
        assert torch.equal(a, b)


def test_sfbd_trains_only_on_noisy_denoised_and_clean_rows_and_leaves_its_start_unchanged():
    rng = np.random.default_rng(0)
    clean, originals = rng.uniform(-1, 1, (10, 4)), rng.uniform(-1, 1, (30, 4))
    noisy = (originals + 0.5 * rng.standard_normal(originals.shape)).astype(np.float32)
    torch.manual_seed(0)
    start = Precond(MLPDenoiser(4, width=16))
    before = [p.clone() for p in start.parameters()]
    seen, rounds = [], []
    final = sfbd(
        start,
        noisy,
        clean.astype(np.float32),
        0.5,
        SFBDOptions(iterations=2, round_steps=5),
        TrainOptions(batch=16),
        seed=0,
        on_round=rounds.append,
        on_batch=seen.append,
    )
    assert [r.k for r in rounds] == [1, 2] and rounds[-1].model is final
    assert all(torch.equal(a, b) for a, b in zip(before, start.parameters(), strict=True))
    rows = torch.cat(seen).numpy()
    allowed = np.concatenate([clean, *(r.denoised for r in rounds)]).astype(np.float32)
    assert all(np.isclose(allowed, row, atol=0).all(axis=1).any() for row in rows)
    assert not any(np.isclose(originals, row, atol=1e-6).all(axis=1).any() for row in rows)


def test_frechet_distance_zero_on_identical_sets_and_closed_form_on_gaussians():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(500, 5))
    assert frechet_distance(a, a) == pytest.approx(0.0, abs=1e-8)
    mu1, mu2 = np.zeros(3), np.array([1.0, 2.0, 0.0])
    cov1, cov2 = np.diag([1.0, 4.0, 9.0]), np.diag([4.0, 1.0, 1.0])
    expected = 5.0 + (1 - 2) ** 2 + (2 - 1) ** 2 + (3 - 1) ** 2
    assert frechet_from_moments(mu1, cov1, mu2, cov2) == pytest.approx(expected)
    rotation = np.linalg.qr(rng.normal(size=(3, 3)))[0]  # non-diagonal: same value under a common rotation
    rotated = frechet_from_moments(
        rotation @ mu1, rotation @ cov1 @ rotation.T, rotation @ mu2, rotation @ cov2 @ rotation.T
    )
    assert rotated == pytest.approx(expected)


def test_kid_w2_and_mmd_separate_shifted_sets():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(300, 4)), rng.normal(size=(300, 4))
    assert abs(kid(a, b)) < 0.05 and kid(a, b + 1.0) > 0.5
    points = rng.normal(size=(50, 2))
    assert wasserstein2(points, points + np.array([3.0, 4.0])) == pytest.approx(5.0)
    assert mmd_rbf(a[:, :2], b[:, :2]) < 0.01 < mmd_rbf(a[:, :2], b[:, :2] + 2.0)


def test_denoisers_keep_the_sample_shape():
    x = torch.randn(3, 14, 14)
    assert SmallUNet(channels=8)(x, torch.zeros(3)).shape == x.shape
    assert build_net("mlp", (8, 8))(torch.randn(2, 8, 8), torch.zeros(2)).shape == (2, 8, 8)
    with pytest.raises(ValueError, match="even sides"):
        build_net("unet", (7, 7))


def test_bad_inputs_are_named(tmp_path):
    clean = np.zeros((5, 4, 4), np.float32)
    with pytest.raises(DataValidationError, match="sigma"):
        check_inputs(clean, clean, 0.0)
    with pytest.raises(DataValidationError, match="at least 2"):
        check_inputs(clean, clean[:1], 0.5)
    with pytest.raises(DataValidationError, match="shapes differ"):
        check_inputs(np.zeros((5, 16)), clean, 0.5)
    with pytest.raises(DataValidationError, match=r"\[−1, 1\]"):
        check_inputs(clean, clean + 3, 0.5)
    with pytest.raises(DataValidationError, match="NaN"):
        check_inputs(np.full((5, 4, 4), np.nan), clean, 0.5)
    with pytest.raises(DataValidationError, match="beyond"):
        check_inputs(clean + 100, clean, 0.5)
    with pytest.raises(DataValidationError, match="unsupported"):
        read_array(tmp_path / "x.csv")
    with pytest.raises(DataValidationError, match="not found"):
        read_array(tmp_path / "x.npy")
    pl.DataFrame({"a": [[0.0, 1.0], [0.0]], "b": [1, 2]}).write_parquet(tmp_path / "t.parquet")
    with pytest.raises(DataValidationError, match="--column"):
        read_array(tmp_path / "t.parquet")
    with pytest.raises(DataValidationError, match="different sizes"):
        read_array(tmp_path / "t.parquet", "a")
    with pytest.raises(DataValidationError, match="no column 'c'"):
        read_array(tmp_path / "t.parquet", "c")


def test_deconvolve_writes_everything_or_nothing(tmp_path):
    rng = np.random.default_rng(0)
    clean = rng.uniform(-1, 1, (20, 4, 4)).astype(np.float32)
    noisy = (rng.uniform(-1, 1, (40, 4, 4)) + 0.5 * rng.standard_normal((40, 4, 4))).astype(np.float32)
    np.save(tmp_path / "clean.npy", clean)
    pl.DataFrame({"image": noisy.reshape(40, -1).tolist()}).write_parquet(tmp_path / "noisy.parquet")
    options = DeconvolveOptions(width=16, pretrain_steps=5, iterations=2, round_steps=3, batch=8, samples=16)
    out = tmp_path / "out"
    with pytest.raises(DataValidationError):
        deconvolve_files(tmp_path / "noisy.parquet", tmp_path / "clean.npy", -1.0, out, options)
    assert not out.exists()
    np.save(tmp_path / "clean16.npy", clean.reshape(20, 16))
    report = deconvolve_files(tmp_path / "noisy.parquet", tmp_path / "clean16.npy", 0.5, out, options)
    assert [row["k"] for row in report["rounds"]] == [0, 1, 2]
    for name in (
        "denoiser.safetensors",
        "samples.npy",
        "denoised.npy",
        "report.md",
        "report.json",
        "distance_by_round.png",
        "samples.png",
        "checkpoints/round_2.safetensors",
    ):
        assert (out / name).is_file(), name
    assert np.load(out / "samples.npy").shape == (16, 16)
    assert math.isfinite(report["rounds"][-1]["fd_pixel_vs_clean"])


def test_icml25_deconvolve_refuses_bad_input_in_one_line(tmp_path):
    from tests.conftest import run_cli

    np.save(tmp_path / "clean.npy", np.zeros((1, 8, 8), np.float32))
    np.save(tmp_path / "noisy.npy", np.zeros((10, 8, 8), np.float32))
    result = run_cli(
        ["deconvolve", "--noisy", "noisy.npy", "--clean", "clean.npy", "--sigma", "0.5", "--output", "out"],
        tmp_path,
    )
    assert result.returncode == 2, result.stderr
    assert "clean.npy: the clean set needs at least 2 images" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
