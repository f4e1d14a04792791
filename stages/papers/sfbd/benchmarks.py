"""SFBD benchmarks (`icml25 bench sfbd`): our EDM Heun sampler and Fréchet distance against the references a
user would pick, on the same inputs, one torch thread, interleaved repeats in a seeded random order, medians.

- Heun: diffusers' `HeunDiscreteScheduler` (prediction_type "sample", so its model output is our denoiser's
  D(x; σ)) stepping along the same 40-node ρ = 7 grid [80, 0.002] + 0 (its Karras grid is built from a DDPM
  β-schedule, so the grid is handed over: its `sigmas` replaced by ours, duplicated as it does), and along the
  cut grid from σ = 0.59 (SFBD's backward pass); same starting points, same denoiser (an MLP trained 300
  steps on digits). Max |difference| of the samples and the time ratio (ours / diffusers).
- Fréchet distance: pytorch-fid's `calculate_frechet_distance` (scipy `sqrtm`) on the moments of two sets of
  64-d features; |difference| and the time ratio. pytorch-fid imports torchvision at load time for its
  Inception model (subclassing three of its blocks), which this benchmark does not use: it is installed with
  `--no-deps` and a few-line stub of `torchvision` (three empty block classes, an empty `transforms`) is
  placed in `sys.modules` here (not in the library).

Writes reports/benchmarks/sfbd.json. Needs the optional extra `bench-sfbd` (diffusers) and
`pip install --no-deps pytorch-fid==0.3.0`.
"""

from __future__ import annotations

import statistics
import sys
import types
from pathlib import Path

import numpy as np
import torch

from stages.core.io import write_json
from stages.core.timing import interleaved_seconds
from stages.methods.diffusion.edm import Precond, TrainOptions, train_edm
from stages.methods.diffusion.metrics import frechet_distance, frechet_from_moments, moments
from stages.methods.diffusion.nets import MLPDenoiser
from stages.methods.diffusion.sampler import cut_grid, heun, karras_grid

RESULTS_DIR = Path("reports/benchmarks")


def _denoiser() -> Precond:
    from sklearn.datasets import load_digits

    data = (load_digits().data / 8.0 - 1.0).astype(np.float32)
    torch.manual_seed(0)
    return train_edm(Precond(MLPDenoiser(64)), data, TrainOptions(steps=300), seed=0).eval()


def diffusers_heun(model: Precond, x: torch.Tensor, sigmas: np.ndarray) -> torch.Tensor:
    """diffusers' Heun stepping rule along our grid (`sigmas` ending at 0)."""
    from diffusers import HeunDiscreteScheduler

    scheduler = HeunDiscreteScheduler(prediction_type="sample", use_karras_sigmas=True)
    scheduler.set_timesteps(len(sigmas) - 1)
    grid = torch.as_tensor(sigmas, dtype=torch.float64)
    scheduler.sigmas = torch.cat([grid[:1], grid[1:-1].repeat_interleave(2), grid[-1:]])
    scheduler.timesteps = torch.arange(len(scheduler.sigmas) - 1, dtype=torch.float32)
    sample = x
    with torch.no_grad():
        for t in scheduler.timesteps:
            sigma = float(scheduler.sigmas[scheduler.step_index or 0])  # first- and second-order node
            output = model(sample, torch.full((len(sample),), sigma, dtype=sample.dtype))
            sample = scheduler.step(output, t, sample).prev_sample.to(x.dtype)
    return sample


def heun_comparison(repeats: int) -> list[dict]:
    model = _denoiser()
    full = karras_grid(40)
    cases = {"full grid from σ_max = 80": full, "cut grid from σ = 0.59": cut_grid(full, 0.59)}
    rows = []
    for name, sigmas in cases.items():
        generator = torch.Generator().manual_seed(1)
        x = torch.randn((1000, 64), generator=generator) * float(sigmas[0])
        ours = heun(model, x, sigmas)
        theirs = diffusers_heun(model, x, sigmas)
        seconds = interleaved_seconds(
            {
                "ours": lambda s=sigmas, x=x: heun(model, x, s),
                "diffusers": lambda s=sigmas, x=x: diffusers_heun(model, x, s),
            },
            repeats=repeats,
        )
        med = {key: statistics.median(value) for key, value in seconds.items()}
        rows.append(
            {
                "case": name,
                "nodes": len(sigmas),
                "samples": len(x),
                "max_abs_difference": float((ours - theirs).abs().max()),
                "same_to_1e-5": bool((ours - theirs).abs().max() <= 1e-5),
                "median_seconds": {key: round(value, 5) for key, value in med.items()},
                "time_ratio_ours_over_diffusers": round(med["ours"] / med["diffusers"], 3),
            }
        )
    return rows


def _pytorch_fid():
    """pytorch-fid's `calculate_frechet_distance`, with torchvision stubbed (the Inception model is unused)."""
    if "torchvision" not in sys.modules:  # its Inception classes are subclassed at import, never built here
        stub, inception = types.ModuleType("torchvision"), types.ModuleType("torchvision.models.inception")
        for name in ("InceptionA", "InceptionC", "InceptionE"):
            setattr(inception, name, type(name, (torch.nn.Module,), {}))
        stub.models = types.SimpleNamespace(inception=inception)  # type: ignore[attr-defined]
        stub.transforms = types.ModuleType("torchvision.transforms")  # type: ignore[attr-defined]
        sys.modules["torchvision"], sys.modules["torchvision.transforms"] = stub, stub.transforms
    from pytorch_fid.fid_score import calculate_frechet_distance

    return calculate_frechet_distance


def frechet_comparison(repeats: int) -> dict:
    reference = _pytorch_fid()
    rng = np.random.default_rng(0)
    mixing = rng.normal(size=(64, 64)) / 8
    a = rng.normal(size=(2000, 64)) @ mixing
    b = rng.normal(size=(2000, 64)) @ (mixing + 0.05 * rng.normal(size=(64, 64))) + 0.1
    (mu1, cov1), (mu2, cov2) = moments(a), moments(b)
    ours, theirs = frechet_from_moments(mu1, cov1, mu2, cov2), float(reference(mu1, cov1, mu2, cov2))
    seconds = interleaved_seconds(
        {
            "ours": lambda: frechet_from_moments(mu1, cov1, mu2, cov2),
            "pytorch_fid": lambda: reference(mu1, cov1, mu2, cov2),
        },
        repeats=repeats,
    )
    med = {key: statistics.median(value) for key, value in seconds.items()}
    return {
        "dimensions": 64,
        "ours": ours,
        "pytorch_fid": theirs,
        "abs_difference": abs(ours - theirs),
        "relative_difference": abs(ours - theirs) / theirs,
        "identical_sets_ours": frechet_distance(a, a),
        "median_seconds": {key: round(value, 6) for key, value in med.items()},
        "time_ratio_ours_over_pytorch_fid": round(med["ours"] / med["pytorch_fid"], 3),
    }


def run_benchmarks(repeats: int = 7) -> dict:
    """Heun sampler vs diffusers and Fréchet distance vs pytorch-fid (one thread, medians of `repeats`)."""
    from threadpoolctl import threadpool_limits

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(1):  # torch and every BLAS (NumPy's, SciPy's) on one thread
            result = {
                "threads": 1,
                "repeats": repeats,
                "heun_vs_diffusers": heun_comparison(repeats),
                "frechet_vs_pytorch_fid": frechet_comparison(repeats),
            }
    finally:
        torch.set_num_threads(threads)
    write_json(result, RESULTS_DIR / "sfbd.json")
    return result
