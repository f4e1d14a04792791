"""EDM's deterministic sampler: the ρ-grid of noise levels, its cut at σ, and Heun's method (Karras et al.,
2022, Algorithm 1 with S_churn = 0; the last step, to σ = 0, is an Euler step)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from stages.core.progress import progress

SIGMA_MIN, SIGMA_MAX, RHO = 0.002, 80.0, 7.0
Denoiser = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
"""D(x, σ): the denoised estimate, σ one value per row."""


def karras_grid(
    steps: int = 40, sigma_min: float = SIGMA_MIN, sigma_max: float = SIGMA_MAX, rho: float = RHO
) -> np.ndarray:
    """σ_i = (σ_max^{1/ρ} + i/(N−1) (σ_min^{1/ρ} − σ_max^{1/ρ}))^ρ for i = 0..N−1, then σ_N = 0 (float64)."""
    if steps < 2:
        raise ValueError(f"the grid needs at least 2 steps, got {steps}")
    i = np.arange(steps, dtype=np.float64)
    grid = (
        sigma_max ** (1 / rho) + i / (steps - 1) * (sigma_min ** (1 / rho) - sigma_max ** (1 / rho))
    ) ** rho
    return np.append(grid, 0.0)


def cut_grid(grid: np.ndarray, sigma: float) -> np.ndarray:
    """The grid from σ down: it starts at the smallest node ≥ σ, that node set to σ (SFBD's backward pass).

    Raises when σ is above the grid's largest node or not positive.
    """
    if not sigma > 0:
        raise ValueError(f"σ must be positive, got {sigma}")
    if sigma > grid[0] * (1 + 1e-12):
        raise ValueError(f"σ = {sigma} is above the grid's largest node {grid[0]}")
    above = np.nonzero(grid >= sigma)[0]
    start = int(above[-1])
    cut = grid[start:].copy()
    cut[0] = sigma
    return cut


@torch.no_grad()
def heun(denoiser: Denoiser, x: torch.Tensor, sigmas: np.ndarray, desc: str | None = None) -> torch.Tensor:
    """Integrate the probability-flow ODE dx/dσ = (x − D(x; σ))/σ from x at σ_0 along `sigmas` (ending at 0):
    a Heun step between positive levels, an Euler step to 0. Arithmetic in x's dtype."""
    levels = [float(s) for s in sigmas]
    steps = range(len(levels) - 1)
    loop = progress(steps, desc, total=len(steps)) if desc else steps
    rows = x.shape[0]
    for i in loop:
        current, following = levels[i], levels[i + 1]
        d = (x - denoiser(x, torch.full((rows,), current, dtype=x.dtype))) / current
        x_next = x + (following - current) * d
        if following > 0:
            d_next = (x_next - denoiser(x_next, torch.full((rows,), following, dtype=x.dtype))) / following
            x_next = x + (following - current) * (d + d_next) / 2
        x = x_next
    return x


def batched(denoiser: Denoiser, batch: int) -> Denoiser:
    """`denoiser` applied in chunks of `batch` rows (bounded memory for large sets)."""

    def run(x: torch.Tensor, sigma: torch.Tensor) -> torch.Tensor:
        parts = [denoiser(x[i : i + batch], sigma[i : i + batch]) for i in range(0, x.shape[0], batch)]
        return torch.cat(parts) if parts else x

    return run


def sample(
    denoiser: Denoiser,
    n: int,
    shape: tuple[int, ...],
    generator: torch.Generator,
    steps: int = 40,
    sigma_max: float = SIGMA_MAX,
) -> torch.Tensor:
    """n fresh samples: x ~ N(0, σ_max² I), Heun along the full `steps`-node grid."""
    x = torch.randn((n, *shape), generator=generator, dtype=torch.float64).float() * sigma_max
    return heun(denoiser, x, karras_grid(steps, sigma_max=sigma_max))


def denoise_from(
    denoiser: Denoiser, y: torch.Tensor, sigma: float, steps: int = 40, sigma_max: float = SIGMA_MAX
) -> torch.Tensor:
    """SFBD's backward pass: each noisy y taken as the state at σ, integrated to 0 on the cut grid."""
    return heun(denoiser, y, cut_grid(karras_grid(steps, sigma_max=sigma_max), sigma))
