"""The SFBD paper: data and splits, the no-leak guarantee, claims logic on made-up results, a smoke run of
every step at tiny size."""

from __future__ import annotations

import importlib
import types
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import torch
from safetensors.numpy import load_file

from stages.core.claims import read_claims
from stages.core.context import StepContext
from stages.core.errors import ParamsError
from stages.core.io import OutputTransaction
from stages.core.params import deep_merge, read_params_file, validate_section
from stages.methods.diffusion import sfbd as sfbd_module
from stages.papers.sfbd import run as run_module
from stages.papers.sfbd.claims import (
    mixture_claim,
    more_clean_claim,
    noisy_claim,
    oracle_claim,
    rounds_claim,
)
from stages.papers.sfbd.data import digits, gmm_sample, mnist_8x8, split_for, stratified_order
from stages.papers.sfbd.params import SFBDParams
from stages.papers.sfbd.pipeline import PAPER
from tests.conftest import REPO_ROOT

TINY = {
    "default": {
        "seeds": [0, 1, 2],
        "width": 16,
        "budget": {"pretrain_steps": 8, "iterations": 2, "round_steps": 4, "batch": 32},
        "max_train": 120,
        "eval_samples": 40,
        "cnn_epochs": 1,
        "workers": 1,
    },
    "gmm": {"train_points": 60, "eval_points": 30, "pretrain_steps": 5, "round_steps": 3, "iterations": 2},
    "samples_kept": 8,
    "claims": {"bootstrap": 10},
}


def params(**changes) -> SFBDParams:
    raw = deep_merge(read_params_file(REPO_ROOT / "params.yaml")["sfbd"], changes)
    return validate_section(SFBDParams, raw, "sfbd")


def test_params_name_the_bad_key():
    with pytest.raises(ParamsError, match="fractions"):
        params(default={"fractions": [0.04, 1.5]})
    with pytest.raises(ParamsError, match="similar"):
        params(full={"similar": True})
    assert params().grid.budget.total_steps == 1000 + 4 * 300


def test_images_are_in_range_and_the_split_nests_fractions_with_fixed_noise():
    images, labels = digits()
    assert images.shape == (1797, 8, 8) and images.min() == -1 and images.max() == 1
    similar = mnist_8x8()
    assert similar.shape == (5000, 8, 8) and similar.min() >= -1 and similar.max() <= 1
    order = stratified_order(labels, 0)
    assert sorted(order.tolist()) == list(range(len(labels)))
    assert np.bincount(labels[order[:100]]).min() >= 8  # any prefix near-stratified
    noise = np.random.default_rng(0).standard_normal(images.shape).astype(np.float32)
    small, large = split_for(images, order, noise, 0.04, 0.59), split_for(images, order, noise, 0.10, 0.59)
    assert len(small.clean) == round(0.04 * 1797) and len(large.clean) == round(0.10 * 1797)
    assert np.array_equal(small.clean, large.clean[: len(small.clean)])
    offset = len(large.clean) - len(small.clean)
    assert np.array_equal(small.noisy[offset:], large.noisy)  # an image keeps its noise
    assert np.allclose(large.noisy - large.originals, 0.59 * noise[order[len(large.clean) :]], atol=1e-6)


def test_gmm_points_come_from_the_mixture():
    points = gmm_sample(4000, 8, 0.7, 0.05, np.random.default_rng(0))
    radius = np.linalg.norm(points, axis=1)
    assert abs(radius.mean() - 0.7) < 0.01


def test_no_clean_version_of_a_noisy_image_reaches_any_training_step(tmp_path, monkeypatch):
    """Every array a training call receives, and every batch it draws, of the seed × fraction job: none holds
    the clean original of a noisy-split image (except images that also appear, as themselves, in the clean set)."""
    workspace = build(tmp_path, ["prepare"])
    p = tiny_params()
    arrays = load_file(str(workspace / "datasets.safetensors"))
    split = split_for(arrays["train_x"], arrays["order_0"], arrays["noise_0"], 0.04, p.grid.sigma)
    clean_rows = {row.tobytes() for row in split.clean}
    forbidden = np.stack([row for row in split.originals if row.tobytes() not in clean_rows])
    seen: list[np.ndarray] = []
    original = sfbd_module.train_edm

    def spy(denoiser, data, options, seed, desc="", on_batch=None):
        seen.append(np.asarray(data))
        return original(denoiser, data, options, seed, desc, on_batch=lambda b: seen.append(b.numpy()))

    monkeypatch.setattr(run_module, "train_edm", spy)
    monkeypatch.setattr(sfbd_module, "train_edm", spy)
    paths = {
        "datasets": str(workspace / "datasets.safetensors"),
        "cnn": str(workspace / "eval_cnn.safetensors"),
        "shape": "8x8",
    }
    run_module.fraction_job(p, 0, paths, 0, 0.04, 10, None)
    assert len(seen) > 10
    flat = forbidden.reshape(len(forbidden), -1)
    for array in seen:
        rows = array.reshape(len(array), -1)
        distances = ((rows[:, None, :] - flat[None, :, :]) ** 2).sum(axis=2)
        assert distances.min() > 1e-6


def made_up_runs(sfbd_k: float, noisy_k: float, se: float = 0.1) -> pl.DataFrame:
    rows = []
    for seed in (0, 1, 2):
        for fraction in (0.04, 0.10):
            gain = 1.0 if fraction == 0.10 else 0.0
            for method, k0, kk in (
                ("sfbd", 10.0, sfbd_k - gain),
                ("clean_only", 10.0, 9.0),
                ("noisy_only", 12.0, noisy_k),
                ("sfbd_from_noisy", 12.0, noisy_k),
                ("similar_sfbd", 20.0, sfbd_k),
            ):
                for k, value in ((0, k0), (2, kk + 0.01 * seed)):
                    rows.append(
                        {
                            "track": "images",
                            "method": method,
                            "fraction": fraction,
                            "seed": seed,
                            "k": k,
                            "fd_feature": value,
                            "metric_se": se,
                        }
                    )
        for k, value in ((0, 4.0), (2, 3.0)):
            rows.append(
                {
                    "track": "images",
                    "method": "oracle",
                    "fraction": -1.0,
                    "seed": seed,
                    "k": k,
                    "fd_feature": value,
                    "metric_se": se,
                }
            )
        for method, w2 in (("sfbd", 0.2), ("clean_only", 0.3), ("noisy_only", 0.5)):
            rows.append(
                {
                    "track": "gmm",
                    "method": method,
                    "fraction": 0.1,
                    "seed": seed,
                    "k": 2,
                    "w2": w2 + 0.01 * seed,
                    "w2_floor": 0.1,
                }
            )
    return pl.DataFrame(rows, infer_schema_length=None)


def made_up_denoised(change: float) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {
                "method": "sfbd",
                "fraction": f,
                "seed": s,
                "k": 2,
                "mse": 0.1,
                "mse_change": change,
                "mse_change_se": 0.001,
            }
            for f in (0.04, 0.10)
            for s in (0, 1, 2)
        ]
    )


def test_claims_hold_on_clear_results_and_fail_on_reversed_ones():
    p = tiny_params()
    good = made_up_runs(sfbd_k=5.0, noisy_k=11.0)
    assert more_clean_claim(good, p).verdict == "holds"
    assert rounds_claim(good, made_up_denoised(-0.01), p).verdict == "holds"
    assert noisy_claim(good, p).verdict == "holds"
    assert oracle_claim(good, p).verdict == "holds"
    assert mixture_claim(good, p).verdict == "holds"
    bad = made_up_runs(sfbd_k=13.0, noisy_k=11.0)
    assert rounds_claim(bad, made_up_denoised(0.01), p).verdict == "fails"
    assert noisy_claim(bad, p).verdict == "fails"
    close = made_up_runs(sfbd_k=11.05, noisy_k=11.0, se=1.0)  # wrong side, but inside the noise
    assert noisy_claim(close, p).verdict == "inconclusive"


def tiny_params() -> SFBDParams:
    return params(**TINY)


def build(root: Path, steps: list[str]) -> Path:
    """Run the named steps at tiny size into `root` (the smoke run)."""
    p = tiny_params()
    common = types.SimpleNamespace(seed=0, threads=1)
    for name in steps:
        step = PAPER.pipeline.step(name)
        with OutputTransaction(root) as out:
            ctx = StepContext(
                stage=f"sfbd-{name}",
                params=p,
                common=common,
                inputs={role: root / Path(path).relative_to("data/sfbd") for role, path in step.deps.items()},
                outputs=out,
                output_paths={
                    role: root / Path(path).relative_to("data/sfbd")
                    for role, path in step.all_outputs().items()
                },
            )
            importlib.import_module(f"stages.papers.sfbd.{name}").run(ctx)
    return root


def test_smoke_run_of_every_step_writes_verdicts_and_figures(tmp_path):
    threads = torch.get_num_threads()
    try:
        root = build(tmp_path, ["prepare", "run", "figures", "claims"])
    finally:
        torch.set_num_threads(threads)
    claims = read_claims(root / "claims.json")
    assert [c.id for c in claims] == [
        "more_clean",
        "rounds_improve",
        "beats_noisy_only",
        "similar_data",
        "oracle_bound",
        "mixture_sanity",
    ]
    runs = pl.read_parquet(root / "runs.parquet")
    assert set(runs["method"]) >= {
        "oracle",
        "clean_only",
        "sfbd",
        "noisy_only",
        "sfbd_from_noisy",
        "similar_sfbd",
    }
    figures = sorted(path.name for path in (root / "figures").iterdir())
    assert "samples_4pct_seed0.png" in figures and "denoised_10pct_seed0.png" in figures
    assert "fd_feature_by_round_4pct.png" in figures
