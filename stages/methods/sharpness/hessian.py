"""The top eigenvalue of a loss Hessian: exact for small parameter counts, Lanczos on Hessian-vector products.

Both work on a loss written as a function of one flat parameter vector (`fn(theta) -> scalar`);
:func:`flat_loss` builds that function from any `torch.nn.Module`, loss function and batch through
`torch.func.functional_call`, so the model itself is never modified.

- exact: `torch.func.hessian` (forward-over-reverse) gives the p × p Hessian, `torch.linalg.eigvalsh` its
  spectrum. Cost O(p) Hessian-vector products and O(p²) memory: used up to `exact_max_params` parameters.
- Lanczos: ARPACK's implicitly restarted Lanczos (`scipy.sparse.linalg.eigsh`, `which="LA"`) on a
  `LinearOperator` whose matvec is a `torch.func` Hessian-vector product (`vjp` of `grad`). It stops when the
  Ritz pair's residual ‖Hq − θq‖ ≤ `tol`·|θ| (ARPACK's criterion; the eigenvalue's error is then of order
  residual²/gap, far below `tol`·|θ|) or after `max_restarts` restarts of `ncv` vectors each; the start
  vector is drawn from `seed`, so the estimate is deterministic. A run that hits the cap returns the best
  Ritz value with `converged=False`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
from torch import nn

Method = Literal["auto", "exact", "lanczos"]
FlatFn = Callable[[torch.Tensor], torch.Tensor]

EXACT_MAX_PARAMS = 1000
"""Default largest parameter count for which `auto` builds the full Hessian."""
LANCZOS_TOL = 1e-6
"""Default relative residual tolerance of the Lanczos estimate."""
LANCZOS_MAX_RESTARTS = 50
"""Default cap on ARPACK restarts (each restart costs up to `ncv` Hessian-vector products)."""
LANCZOS_NCV = 20
"""Default Lanczos basis size (vectors kept between restarts)."""


@dataclass(frozen=True)
class SharpnessEstimate:
    """The top Hessian eigenvalue, how it was computed and what it cost."""

    value: float
    method: Literal["exact", "lanczos"]
    matvecs: int
    converged: bool
    params: int


def flat_parameters(
    model: nn.Module,
) -> tuple[torch.Tensor, Callable[[torch.Tensor], dict[str, torch.Tensor]]]:
    """The model's trainable parameters as one detached flat vector, and the map back to named tensors."""
    named = {name: parameter for name, parameter in model.named_parameters() if parameter.requires_grad}
    if not named:
        raise ValueError("the model has no trainable parameters")
    shapes = {name: parameter.shape for name, parameter in named.items()}
    sizes = [parameter.numel() for parameter in named.values()]
    theta = torch.cat([parameter.detach().reshape(-1) for parameter in named.values()])

    def unflatten(flat: torch.Tensor) -> dict[str, torch.Tensor]:
        chunks = torch.split(flat, sizes)
        return {name: chunk.view(shapes[name]) for name, chunk in zip(shapes, chunks, strict=True)}

    return theta, unflatten


def flat_loss(
    model: nn.Module,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    inputs: torch.Tensor,
    targets: torch.Tensor,
) -> tuple[FlatFn, torch.Tensor]:
    """`fn(theta) = loss_fn(model(inputs; theta), targets)` and the model's current flat parameters.

    Buffers (batch-norm statistics) are held at their current values; evaluate the model in the mode you
    want measured (`model.eval()` for a deterministic loss).
    """
    theta, unflatten = flat_parameters(model)
    buffers = dict(model.named_buffers())

    def fn(flat: torch.Tensor) -> torch.Tensor:
        outputs = torch.func.functional_call(model, {**unflatten(flat), **buffers}, (inputs,))
        return loss_fn(outputs, targets)

    return fn, theta


def hessian_matrix(fn: FlatFn, theta: torch.Tensor) -> torch.Tensor:
    """The full p × p Hessian of `fn` at `theta` (symmetrised against round-off)."""
    hessian = torch.func.hessian(fn)(theta.detach())
    return (hessian + hessian.T) / 2


def exact_top_eigenvalue(fn: FlatFn, theta: torch.Tensor) -> SharpnessEstimate:
    """λ_max of the full Hessian (eigvalsh)."""
    value = float(torch.linalg.eigvalsh(hessian_matrix(fn, theta))[-1])
    return SharpnessEstimate(value, "exact", matvecs=theta.numel(), converged=True, params=theta.numel())


def hvp_function(fn: FlatFn, theta: torch.Tensor) -> Callable[[torch.Tensor], torch.Tensor]:
    """v ↦ H(theta) v, reverse-over-reverse: the gradient is linearised once at `theta` (`vjp` of `grad`), each
    product then costs about one backward pass; H is symmetric, so the vector-Jacobian product is Hv."""
    _, pullback = torch.func.vjp(torch.func.grad(fn), theta.detach())

    def hvp(vector: torch.Tensor) -> torch.Tensor:
        return pullback(vector)[0]

    return hvp


def lanczos_top_eigenvalue(
    fn: FlatFn,
    theta: torch.Tensor,
    tol: float = LANCZOS_TOL,
    max_restarts: int = LANCZOS_MAX_RESTARTS,
    ncv: int = LANCZOS_NCV,
    seed: int = 0,
) -> SharpnessEstimate:
    """λ_max by implicitly restarted Lanczos on Hessian-vector products (see the module docstring)."""
    from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

    dim = theta.numel()
    if dim < 3:
        return exact_top_eigenvalue(fn, theta)
    hvp = hvp_function(fn, theta)
    count = [0]

    def matvec(vector: np.ndarray) -> np.ndarray:
        count[0] += 1
        tensor = torch.as_tensor(np.ascontiguousarray(vector).reshape(-1), dtype=theta.dtype)
        return hvp(tensor).detach().cpu().numpy().astype(np.float64)

    operator = LinearOperator((dim, dim), matvec=matvec, dtype=np.float64)
    start = np.random.default_rng(seed).standard_normal(dim)
    basis = min(ncv, dim - 1)
    try:
        values = eigsh(operator, k=1, which="LA", tol=tol, maxiter=max_restarts, ncv=basis, v0=start)[0]
        return SharpnessEstimate(float(values[-1]), "lanczos", count[0], converged=True, params=dim)
    except ArpackNoConvergence as stopped:
        values = stopped.eigenvalues
        value = float(values[-1]) if len(values) else float("nan")
        return SharpnessEstimate(value, "lanczos", count[0], converged=False, params=dim)


def top_eigenvalue(
    fn: FlatFn,
    theta: torch.Tensor,
    method: Method = "auto",
    exact_max_params: int = EXACT_MAX_PARAMS,
    tol: float = LANCZOS_TOL,
    max_restarts: int = LANCZOS_MAX_RESTARTS,
    seed: int = 0,
) -> SharpnessEstimate:
    """λ_max of the Hessian of `fn` at `theta`: exact when `method="exact"` or (auto) p ≤ `exact_max_params`,
    Lanczos otherwise."""
    if method not in ("auto", "exact", "lanczos"):
        raise ValueError(f"method {method!r}: expected 'auto', 'exact' or 'lanczos'")
    if method == "exact" or (method == "auto" and theta.numel() <= exact_max_params):
        return exact_top_eigenvalue(fn, theta)
    return lanczos_top_eigenvalue(fn, theta, tol=tol, max_restarts=max_restarts, seed=seed)


def top_hessian_eigenvalue(
    model: nn.Module,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    inputs: torch.Tensor,
    targets: torch.Tensor,
    method: Method = "auto",
    exact_max_params: int = EXACT_MAX_PARAMS,
    tol: float = LANCZOS_TOL,
    max_restarts: int = LANCZOS_MAX_RESTARTS,
    seed: int = 0,
) -> SharpnessEstimate:
    """The sharpness λ_max(∇²L) of `loss_fn(model(inputs), targets)` over the model's trainable parameters.

    Pass the whole training set as `inputs`/`targets` to get the sharpness of the full training loss.
    """
    fn, theta = flat_loss(model, loss_fn, inputs, targets)
    return top_eigenvalue(fn, theta, method, exact_max_params, tol, max_restarts, seed)
