"""SFBD (Lu, Wu & Yu, ICML 2025, Algorithm 1 as run by the official code, watml/SFBD):

1. φ_0: EDM training on the clean set only (or any starting denoiser: noisy-only, a similar dataset);
2. for k = 1..K: backward — every noisy y_i (= x_i + σ ε_i, ε_i drawn once and kept) taken as the state at σ
   and integrated to 0 by the deterministic Heun sampler with D_φ(k−1)'s EMA weights (E_k); update — fine-tune
   from φ(k−1)'s EMA weights with a fresh Adam and EMA, full-range EDM loss, on E_k ∪ clean.

The loop sees only the noisy set y and the clean set; what each round produced is handed to `on_round`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from stages.core.progress import progress
from stages.methods.diffusion.edm import BatchHook, Precond, TrainOptions, train_edm
from stages.methods.diffusion.sampler import batched, denoise_from


@dataclass(frozen=True)
class SFBDOptions:
    """K rounds of `round_steps` fine-tuning steps each; the backward pass on the `grid_steps`-node grid."""

    iterations: int = 4
    round_steps: int = 1000
    grid_steps: int = 40
    train_on_clean: bool = True  # the official README merges E_k with the clean set; Alg. 1 writes E_k only
    backward_batch: int = 4096


@dataclass
class Round:
    """One SFBD round: k, the denoised noisy set E_k (made with φ(k−1)) and the model φ_k (EMA weights)."""

    k: int
    denoised: np.ndarray
    model: Precond


RoundHook = Callable[[Round], None]


def backward_pass(model: Precond, noisy: np.ndarray, sigma: float, grid_steps: int, batch: int) -> np.ndarray:
    """E = Heun from σ to 0 of every noisy sample under `model` (deterministic)."""
    model.eval()
    y = torch.as_tensor(noisy, dtype=torch.float32)
    return denoise_from(batched(model, batch), y, sigma, steps=grid_steps).numpy()


def sfbd(
    start: Precond,
    noisy: np.ndarray,
    clean: np.ndarray,
    sigma: float,
    options: SFBDOptions,
    train: TrainOptions,
    seed: int,
    on_round: RoundHook | None = None,
    on_batch: BatchHook | None = None,
) -> Precond:
    """Run K SFBD rounds from the denoiser `start` (left unchanged); returns φ_K (EMA weights).

    `noisy`: the noisy samples y (rows); `clean`: the clean set (rows, may be empty when `train_on_clean` is
    False); `train.steps` is ignored (each round runs `options.round_steps`).
    """
    if not sigma > 0:
        raise ValueError(f"σ must be positive, got {sigma}")
    model = copy.deepcopy(start)
    round_train = TrainOptions(**{**train.__dict__, "steps": options.round_steps})
    for k in progress(range(1, options.iterations + 1), "SFBD rounds", total=options.iterations, leave=True):
        denoised = backward_pass(model, noisy, sigma, options.grid_steps, options.backward_batch)
        data = np.concatenate([denoised, clean]) if options.train_on_clean and len(clean) else denoised
        model = train_edm(
            copy.deepcopy(model), data, round_train, seed=seed + k, desc=f"SFBD round {k}", on_batch=on_batch
        )
        if on_round is not None:
            on_round(Round(k, denoised, model))
    return model
