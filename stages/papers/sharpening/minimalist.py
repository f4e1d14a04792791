"""GD / SGD on the minimalist model f(x) = (xᵀu)·∏_{i=1}^{D−1} v_i, many runs of one dataset at once.

The loss depends on u only through Xu, so training happens in the coordinates of X's right singular vectors:
u = Σ_k b_k w_k (+ a part outside X's row space that no gradient touches and no loss or Hessian sees). With
X = Σ σ_k e_k w_kᵀ and d_k = e_kᵀy the full-batch loss is (1/2N)[Σ_k (σ_k b_k π − d_k)² + ‖y‖² − Σ d_k²],
π = ∏v_i, so a GD step costs O(N) instead of O(N·784), and the Hessian in (b, v) has the same non-zero
spectrum as in (u, v) (an orthogonal change of coordinates; tested). Mini-batches use the rows of X̃ = UΣ.

Runs trained together share the batch size (B = N: GD) and, for mini-batches, N; each has its own data,
depth, seed (initial direction of u, batch order) and step size, and all advance in one vectorised loop.
Every `every` steps the loop evaluates the full training loss and calls a
:class:`~stages.methods.sharpness.tracker.SharpnessTracker` per run (exact Hessian of the loss as a function of
the flat vector (b, v)). A run stops once its loss is ≤ `loss_target` (converged), or diverges (loss not
finite or above `divergence_loss`), or reaches `max_steps`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from stages.methods.sharpness.theory import Spectrum, check_batch_size, check_depth, check_step_size
from stages.methods.sharpness.tracker import SharpnessTracker

DIVERGENCE_LOSS = 1e6


@dataclass(frozen=True)
class RunSpec:
    """One run: its seed, step size and batch size (B = N is GD) and labels for the result table."""

    seed: int
    eta: float
    batch_size: int
    labels: dict


@dataclass
class RunResult:
    """How a run ended and its sharpness trajectory (tracker records)."""

    spec: RunSpec
    status: str  # converged | diverged | capped
    steps: int
    final_loss: float
    final_sharpness: float
    initial_sharpness: float
    records: list[dict]


@dataclass(frozen=True)
class ReducedData:
    """A dataset in X's singular coordinates: σ, d = Uᵀy, the rows of X̃ = UΣ, y, N and ‖y‖²."""

    sigma: np.ndarray
    d: np.ndarray
    rows: np.ndarray
    y: np.ndarray

    @property
    def n(self) -> int:
        return int(self.y.shape[0])

    @property
    def constant(self) -> float:
        """‖y‖² − Σ d_k²: the part of the loss no parameter can fit (0 when X has rank N)."""
        return max(float(self.y @ self.y - self.d @ self.d), 0.0)

    def spectrum(self) -> Spectrum:
        return Spectrum(self.sigma, self.d, self.n, float(self.y @ self.y))


def reduce(x: np.ndarray, y: np.ndarray, rank_tol: float = 1e-10) -> ReducedData:
    """SVD coordinates of (X, y) (singular values below rank_tol·σ₁ dropped)."""
    left, sigma, _ = np.linalg.svd(np.asarray(x, np.float64), full_matrices=False)
    keep = sigma > rank_tol * sigma[0]
    left, sigma = left[:, keep], sigma[keep]
    y = np.asarray(y, np.float64)
    return ReducedData(sigma, left.T @ y, left * sigma, y)


def torch_loss(data: ReducedData, depth: int):
    """The full training loss as a torch function of the flat vector θ = (b, v) (float64)."""
    sigma, d = torch.from_numpy(data.sigma), torch.from_numpy(data.d)
    rank, constant, n = len(data.sigma), data.constant, data.n

    def fn(theta: torch.Tensor) -> torch.Tensor:
        b, v = theta[:rank], theta[rank:]
        product = torch.prod(v) if depth > 1 else torch.ones((), dtype=theta.dtype)
        return (((sigma * b * product - d) ** 2).sum() + constant) / (2 * n)

    return fn


def initial_parameters(rank: int, depth: int, seed: int, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Balanced small init: ‖b‖ = |v_i| = scale, b's direction uniform (drawn from the run's seed)."""
    b = np.random.default_rng([seed, 1]).standard_normal(rank)
    return b * scale / np.linalg.norm(b), np.full(depth - 1, scale)


@dataclass(frozen=True)
class Stacked:
    """Runs stacked for one vectorised loop: per-run data padded with zeros (a zero σ_k, d_k contributes
    nothing), v padded with ones (the product is unchanged) and a mask of the real v entries."""

    sigma: np.ndarray  # R × r
    d: np.ndarray  # R × r
    n: np.ndarray  # R × 1
    constant: np.ndarray  # R
    v_mask: np.ndarray  # R × (D_max − 1)
    rows: np.ndarray | None  # R × N × r (mini-batches; all runs share N)
    y: np.ndarray | None  # R × N


def stack(datas: list[ReducedData], depths: list[int], batched: bool) -> Stacked:
    """Pad and stack the runs' data (`batched`: keep the rows for mini-batches)."""
    rank = max(len(data.sigma) for data in datas)
    width = max(max(depths) - 1, 1)

    def pad(values: np.ndarray) -> np.ndarray:
        return np.pad(values, [(0, 0)] * (values.ndim - 1) + [(0, rank - values.shape[-1])])

    return Stacked(
        sigma=np.stack([pad(data.sigma) for data in datas]),
        d=np.stack([pad(data.d) for data in datas]),
        n=np.array([[data.n] for data in datas], dtype=np.float64),
        constant=np.array([data.constant for data in datas]),
        v_mask=np.array([[j < depth - 1 for j in range(width)] for depth in depths]),
        rows=np.stack([pad(data.rows) for data in datas]) if batched else None,
        y=np.stack([data.y for data in datas]) if batched else None,
    )


def stacked_loss(data: Stacked, b: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Full training loss per run."""
    residual = data.sigma * b * np.prod(v, axis=1, keepdims=True) - data.d
    return ((residual**2).sum(axis=1) + data.constant) / (2 * data.n[:, 0])


def _gd_gradients(data: Stacked, b, product):
    residual = data.sigma * b * product - data.d
    grad_b = product * data.sigma * residual / data.n
    fitted = (data.sigma * b * residual).sum(axis=1, keepdims=True) / data.n
    return grad_b, fitted


def _sgd_gradients(data: Stacked, b, product, batch):
    runs = np.arange(b.shape[0])[:, None]
    rows = data.rows[runs, batch]  # R × B × r
    outputs = np.einsum("rbk,rk->rb", rows, b)
    residual = outputs * product - data.y[runs, batch]
    size = batch.shape[1]
    grad_b = product * np.einsum("rbk,rb->rk", rows, residual) / size
    fitted = (outputs * residual).sum(axis=1, keepdims=True) / size
    return grad_b, fitted


def _batch_stream(seed: int, n: int, size: int, steps: int, start: int) -> np.ndarray:
    """Indices of steps [start, start + steps): reshuffled every epoch, drawn from (seed, epoch)."""
    epochs = range((start * size) // n, ((start + steps) * size) // n + 1)
    stream = np.concatenate([np.random.default_rng([seed, 2, epoch]).permutation(n) for epoch in epochs])
    offset = start * size - epochs.start * n
    return stream[offset : offset + steps * size].reshape(steps, size)


def train_runs(
    datas: list[ReducedData],
    depths: list[int],
    runs: list[RunSpec],
    init_scale: float | Sequence[float],
    loss_target: float,
    max_steps: int,
    every: int,
) -> list[RunResult]:
    """Train every run (its own data, depth, seed, η; one shared batch size, B = N for GD) to `loss_target`, or
    divergence, or `max_steps`, measuring each run's exact sharpness every `every` steps. `init_scale`: the
    balanced init's α (‖b‖ = |v_i| = α), one for all runs or one per run."""
    if not len(datas) == len(depths) == len(runs) or not runs:
        raise ValueError("train_runs needs one data set, depth and spec per run")
    scales = [float(init_scale)] * len(runs) if np.isscalar(init_scale) else [float(a) for a in init_scale]
    if len(scales) != len(runs) or not all(a > 0 and np.isfinite(a) for a in scales):
        raise ValueError(f"init_scale {init_scale!r}: one finite α > 0, or one per run")
    gd = all(run.batch_size == data.n for run, data in zip(runs, datas, strict=True))
    sizes = {run.batch_size for run in runs}
    if not gd and (len(sizes) != 1 or len({data.n for data in datas}) != 1):
        raise ValueError("mini-batch runs trained together share N and the batch size (GD runs: B = each N)")
    size = max(sizes)
    for data, depth, run in zip(datas, depths, runs, strict=True):
        check_depth(depth)
        check_batch_size(run.batch_size, data.n)
    eta = np.array([[check_step_size(run.eta)] for run in runs])
    stacked = stack(datas, depths, batched=not gd)
    b = np.zeros_like(stacked.sigma)
    v = np.ones(stacked.v_mask.shape)
    for index, (data, depth, run) in enumerate(zip(datas, depths, runs, strict=True)):
        first, rest = initial_parameters(len(data.sigma), depth, run.seed, scales[index])
        b[index, : len(first)], v[index, : depth - 1] = first, rest
    losses_fn = [torch_loss(data, depth) for data, depth in zip(datas, depths, strict=True)]
    trackers = [SharpnessTracker(every=every, eta=run.eta, method="exact") for run in runs]
    active = np.ones(len(runs), dtype=bool)
    status = ["capped"] * len(runs)
    stopped = [max_steps] * len(runs)
    step = 0
    with np.errstate(over="ignore", invalid="ignore"):
        while True:
            losses = stacked_loss(stacked, b, v)
            for index in np.flatnonzero(active):
                rank, depth = len(datas[index].sigma), depths[index]
                theta = torch.from_numpy(np.concatenate([b[index, :rank], v[index, : depth - 1]]))
                trackers[index].observe_flat(step, losses_fn[index], theta, force=True)
                if not np.isfinite(losses[index]) or losses[index] > DIVERGENCE_LOSS:
                    status[index], stopped[index], active[index] = "diverged", step, False
                elif losses[index] <= loss_target:
                    status[index], stopped[index], active[index] = "converged", step, False
            if not active.any() or step >= max_steps:
                break
            chunk = min(every, max_steps - step)
            batches = (
                None
                if gd
                else np.stack(
                    [_batch_stream(run.seed, datas[0].n, size, chunk, step) for run in runs], axis=1
                )
            )
            live = np.flatnonzero(active)
            sub = _select(stacked, live)
            b_live, v_live, eta_live = b[live], v[live], eta[live]
            for offset in range(chunk):
                product = np.prod(v_live, axis=1, keepdims=True)
                if batches is None:
                    grad_b, fitted = _gd_gradients(sub, b_live, product)
                else:
                    grad_b, fitted = _sgd_gradients(sub, b_live, product, batches[offset][live])
                grad_v = np.where(sub.v_mask, product / v_live * fitted, 0.0)
                b_live = b_live - eta_live * grad_b
                v_live = v_live - eta_live * grad_v
            b[live], v[live] = b_live, v_live
            step += chunk
    return [
        RunResult(
            spec=run,
            status=status[index],
            steps=stopped[index],
            final_loss=trackers[index].records[-1]["loss"],
            final_sharpness=trackers[index].records[-1]["sharpness"],
            initial_sharpness=trackers[index].records[0]["sharpness"],
            records=trackers[index].records,
        )
        for index, run in enumerate(runs)
    ]


def _select(data: Stacked, live: np.ndarray) -> Stacked:
    """The stacked data of the still-active runs."""
    return Stacked(
        sigma=data.sigma[live],
        d=data.d[live],
        n=data.n[live],
        constant=data.constant[live],
        v_mask=data.v_mask[live],
        rows=data.rows[live] if data.rows is not None else None,
        y=data.y[live] if data.y is not None else None,
    )
