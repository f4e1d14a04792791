"""The practical networks: deep linear and tanh MLPs (width w, depth D linear layers, scalar output), GD or SGD
on L = (1/2N)‖f(X) − y‖², sharpness tracked by Lanczos on Hessian-vector products.

Inputs are given in X's row-space coordinates (x̃ = Vᵀx ∈ R^N, V the right singular vectors): a first layer
W₁ acts on the training data only through W₁V, its part outside the row space gets no gradient and no curvature,
and W₁V of a Gaussian W₁ is again Gaussian with the same entry variance. The first layer is therefore drawn
with the original fan-in (784), which makes training and the Hessian's non-zero spectrum those of the
network on the raw pixels, at N/784 of the first layer's cost (tested against the raw-pixel network).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from stages.methods.sharpness.theory import check_batch_size, check_depth, check_step_size
from stages.methods.sharpness.tracker import SharpnessTracker

ACTIVATIONS = {"linear": nn.Identity, "tanh": nn.Tanh}


class DeepNet(nn.Module):
    """`depth` bias-free linear layers of width `width` (scalar output), `activation` between them."""

    def __init__(
        self, in_dim: int, width: int, depth: int, activation: str, fan_in: int | None = None
    ) -> None:
        super().__init__()
        check_depth(depth)
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation {activation!r}: expected one of {', '.join(ACTIVATIONS)}")
        sizes = [in_dim, *([width] * (depth - 1)), 1]
        self.fan_ins = [fan_in or in_dim, *sizes[1:-1]]
        self.layers = nn.ModuleList(nn.Linear(a, b, bias=False) for a, b in itertools.pairwise(sizes))
        self.activation = ACTIVATIONS[activation]()

    def reset(self, generator: torch.Generator) -> None:
        """LeCun-normal init: entries N(0, 1/fan_in), the first layer's fan-in the raw input dimension."""
        with torch.no_grad():
            for layer, fan_in in zip(self.layers, self.fan_ins, strict=True):
                layer.weight.copy_(
                    torch.randn(layer.weight.shape, generator=generator, dtype=layer.weight.dtype)
                )
                layer.weight.mul_(1 / math.sqrt(fan_in))

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        hidden = inputs
        for layer in self.layers[:-1]:
            hidden = self.activation(layer(hidden))
        return self.layers[-1](hidden).squeeze(-1)


def half_mse(outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """(1/2N)‖f − y‖²."""
    return 0.5 * ((outputs - targets) ** 2).mean()


def row_space_inputs(x: np.ndarray, rank_tol: float = 1e-10) -> np.ndarray:
    """x̃ = X V (N × rank): the training inputs in the coordinates of X's right singular vectors."""
    left, sigma, _ = np.linalg.svd(np.asarray(x, np.float64), full_matrices=False)
    keep = sigma > rank_tol * sigma[0]
    return left[:, keep] * sigma[keep]


@dataclass
class PracticalResult:
    """How a practical run ended and its tracker records."""

    status: str
    steps: int
    final_loss: float
    final_sharpness: float
    initial_sharpness: float
    records: list[dict]


def train_practical(
    inputs: np.ndarray,
    targets: np.ndarray,
    raw_dim: int,
    architecture: str,
    width: int,
    depth: int,
    eta: float,
    batch_size: int,
    seed: int,
    loss_target: float,
    max_steps: int,
    every: int,
    tol: float,
    max_restarts: int,
) -> PracticalResult:
    """GD (B = N) or SGD with constant η from a seeded init, Lanczos sharpness every `every` steps."""
    check_step_size(eta)
    n = inputs.shape[0]
    check_batch_size(batch_size, n)
    x, y = torch.tensor(inputs, dtype=torch.float64), torch.tensor(targets, dtype=torch.float64)
    model = DeepNet(x.shape[1], width, depth, architecture, fan_in=raw_dim).double()
    model.reset(torch.Generator().manual_seed(seed))
    parameters = list(model.parameters())
    tracker = SharpnessTracker(
        every=every, eta=eta, method="lanczos", tol=tol, max_restarts=max_restarts, seed=seed
    )
    order = np.random.default_rng([seed, 3])
    batch = torch.arange(n)
    status, step = "capped", 0
    while True:
        record = tracker(step, model, half_mse, x, y, force=step == 0)
        loss = record["loss"] if record else None
        if loss is not None:
            if not math.isfinite(loss) or loss > 1e6:
                status = "diverged"
                break
            if loss <= loss_target:
                status = "converged"
                break
        if step >= max_steps:
            break
        if batch_size < n:
            batch = torch.from_numpy(order.choice(n, batch_size, replace=False))
        gradients = torch.autograd.grad(half_mse(model(x[batch]), y[batch]), parameters)
        with torch.no_grad():
            for parameter, gradient in zip(parameters, gradients, strict=True):
                parameter.sub_(eta * gradient)
        step += 1
    if tracker.last()["step"] != step:
        tracker(step, model, half_mse, x, y, force=True)
    last = tracker.last()
    return PracticalResult(
        status, step, last["loss"], last["sharpness"], tracker.records[0]["sharpness"], tracker.records
    )
