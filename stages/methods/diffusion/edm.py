"""EDM preconditioning, loss, EMA and training (Karras et al., 2022, Table 1 and the official training loop)."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from stages.core.progress import progress

SIGMA_DATA = 0.5
P_MEAN, P_STD = -1.2, 1.2


def c_skip(sigma: torch.Tensor, sigma_data: float = SIGMA_DATA) -> torch.Tensor:
    """Skip scaling σ_d² / (σ² + σ_d²)."""
    return sigma_data**2 / (sigma**2 + sigma_data**2)


def c_out(sigma: torch.Tensor, sigma_data: float = SIGMA_DATA) -> torch.Tensor:
    """Output scaling σ σ_d / √(σ² + σ_d²)."""
    return sigma * sigma_data / (sigma**2 + sigma_data**2).sqrt()


def c_in(sigma: torch.Tensor, sigma_data: float = SIGMA_DATA) -> torch.Tensor:
    """Input scaling 1 / √(σ² + σ_d²)."""
    return 1 / (sigma**2 + sigma_data**2).sqrt()


def c_noise(sigma: torch.Tensor) -> torch.Tensor:
    """Noise conditioning ln(σ) / 4."""
    return sigma.log() / 4


def loss_weight(sigma: torch.Tensor, sigma_data: float = SIGMA_DATA) -> torch.Tensor:
    """λ(σ) = (σ² + σ_d²) / (σ σ_d)²: makes the effective training target unit-variance at every σ."""
    return (sigma**2 + sigma_data**2) / (sigma * sigma_data) ** 2


class Precond(nn.Module):
    """D(x; σ) = c_skip(σ) x + c_out(σ) F(c_in(σ) x; c_noise(σ)) around a raw network F(x, c_noise)."""

    def __init__(self, net: nn.Module, sigma_data: float = SIGMA_DATA) -> None:
        super().__init__()
        self.net = net
        self.sigma_data = sigma_data

    def forward(self, x: torch.Tensor, sigma: torch.Tensor | float) -> torch.Tensor:
        """The denoised estimate of x's clean version; σ a scalar or one value per row."""
        sigma = torch.as_tensor(sigma, dtype=x.dtype).reshape(-1)
        if sigma.numel() == 1:
            sigma = sigma.expand(x.shape[0])
        shape = (-1,) + (1,) * (x.dim() - 1)
        s = sigma.reshape(shape)
        raw = self.net(c_in(s, self.sigma_data) * x, c_noise(sigma))
        return c_skip(s, self.sigma_data) * x + c_out(s, self.sigma_data) * raw


def edm_loss(
    denoiser: Precond,
    x: torch.Tensor,
    generator: torch.Generator,
    p_mean: float = P_MEAN,
    p_std: float = P_STD,
) -> torch.Tensor:
    """E_σ,n λ(σ) ‖D(x + n; σ) − x‖², ln σ ~ N(p_mean, p_std²), n ~ N(0, σ² I); mean over rows and entries."""
    shape = (x.shape[0],) + (1,) * (x.dim() - 1)
    sigma = (torch.randn(shape, generator=generator) * p_std + p_mean).exp()
    noisy = x + torch.randn(x.shape, generator=generator) * sigma
    denoised = denoiser(noisy, sigma.reshape(-1))
    return (loss_weight(sigma, denoiser.sigma_data) * (denoised - x) ** 2).mean()


class EMA:
    """EDM's exponential moving average: half-life min(halflife_kimg·1000, rampup·images seen) images, so
    beta = 0.5^(batch / half-life) after every step."""

    def __init__(self, model: nn.Module, halflife_kimg: float = 500.0, rampup: float | None = 0.05) -> None:
        self.model = copy.deepcopy(model).eval().requires_grad_(False)
        self.halflife_kimg = halflife_kimg
        self.rampup = rampup

    def beta(self, images_seen: int, batch: int) -> float:
        """The decay after `images_seen` images (counted after the step) with batches of `batch`."""
        halflife = self.halflife_kimg * 1000
        if self.rampup is not None:
            halflife = min(halflife, images_seen * self.rampup)
        return 0.5 ** (batch / max(halflife, 1e-8))

    @torch.no_grad()
    def update(self, model: nn.Module, images_seen: int, batch: int) -> None:
        """Move the average towards `model`'s current weights."""
        if not hasattr(self, "_pairs") or self._pairs[2] is not model:
            self._pairs = (list(self.model.parameters()), list(model.parameters()), model)
        torch._foreach_lerp_(self._pairs[0], self._pairs[1], 1 - self.beta(images_seen, batch))


@dataclass(frozen=True)
class TrainOptions:
    """Adam steps on batches drawn with replacement; EDM's EMA; the log-normal σ law."""

    steps: int = 2000
    batch: int = 256
    lr: float = 1e-3
    ema_halflife_kimg: float = 500.0
    ema_rampup: float | None = 0.05
    p_mean: float = P_MEAN
    p_std: float = P_STD


BatchHook = Callable[[torch.Tensor], None]
"""Called with every training batch before its step (the no-leak test records them)."""


def train_edm(
    denoiser: Precond,
    data: np.ndarray,
    options: TrainOptions,
    seed: int,
    desc: str = "EDM steps",
    on_batch: BatchHook | None = None,
) -> Precond:
    """Train `denoiser` in place on `data` (rows = samples) with the EDM loss; a fresh Adam and EMA (EDM's
    `--transfer`: the caller passes the previous EMA weights as `denoiser`). Returns the EMA denoiser."""
    if len(data) == 0:
        raise ValueError("train_edm needs at least one training sample")
    generator = torch.Generator().manual_seed(seed)
    tensor = torch.as_tensor(np.asarray(data), dtype=torch.float32)
    denoiser.train().requires_grad_(True)
    ema = EMA(denoiser, options.ema_halflife_kimg, options.ema_rampup)
    optimizer = torch.optim.Adam(denoiser.parameters(), lr=options.lr, foreach=True)
    for step in progress(range(options.steps), desc, total=options.steps):
        rows = torch.randint(0, len(tensor), (options.batch,), generator=generator)
        batch = tensor[rows]
        if on_batch is not None:
            on_batch(batch)
        loss = edm_loss(denoiser, batch, generator, options.p_mean, options.p_std)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        ema.update(denoiser, (step + 1) * options.batch, options.batch)
    return ema.model


def log_normal_sigma_quantiles(p_mean: float = P_MEAN, p_std: float = P_STD) -> tuple[float, float]:
    """The central 95 % range of the training σ law (for reports)."""
    return math.exp(p_mean - 1.96 * p_std), math.exp(p_mean + 1.96 * p_std)
