"""A sharpness callback for any training loop: call it every step; it measures every `every` steps.

```python
tracker = SharpnessTracker(every=10, eta=0.05)
for step in range(steps):
    tracker(step, model, loss_fn, x_train, y_train)  # measures at steps 0, 10, 20, ...
    ...  # one optimiser step
tracker.records  # [{"step": 0, "sharpness": ..., "loss": ..., "threshold": 40.0, ...}, ...]
```

Each record holds the step, the top Hessian eigenvalue of the loss on the batch passed (pass the full training
set for the sharpness of the training loss), the loss there, 2/η when `eta` was given, and how the eigenvalue
was computed (method, Hessian-vector products, converged). `observe_flat` does the same for a loss written
as a function of one flat parameter vector.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from stages.methods.sharpness.hessian import (
    EXACT_MAX_PARAMS,
    LANCZOS_MAX_RESTARTS,
    LANCZOS_TOL,
    FlatFn,
    Method,
    flat_loss,
    top_eigenvalue,
)
from stages.methods.sharpness.theory import stability_threshold


@dataclass
class SharpnessTracker:
    """Records the sharpness every `every` steps (and at any step passed with `force=True`)."""

    every: int
    eta: float | None = None
    method: Method = "auto"
    exact_max_params: int = EXACT_MAX_PARAMS
    tol: float = LANCZOS_TOL
    max_restarts: int = LANCZOS_MAX_RESTARTS
    seed: int = 0
    records: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.every < 1:
            raise ValueError(f"every = {self.every}: the cadence must be ≥ 1 step")
        self.threshold = stability_threshold(self.eta) if self.eta is not None else None

    def due(self, step: int) -> bool:
        """Whether `step` is a measured step."""
        return step % self.every == 0

    def __call__(
        self,
        step: int,
        model: nn.Module,
        loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
        inputs: torch.Tensor,
        targets: torch.Tensor,
        force: bool = False,
    ) -> dict[str, Any] | None:
        """Measure at `step` if due (or forced); returns the new record or None."""
        if not (force or self.due(step)):
            return None
        fn, theta = flat_loss(model, loss_fn, inputs, targets)
        return self.observe_flat(step, fn, theta, force=True)

    def observe_flat(
        self, step: int, fn: FlatFn, theta: torch.Tensor, force: bool = False, **extra: Any
    ) -> dict[str, Any] | None:
        """Measure the Hessian of `fn` at `theta` if `step` is due (or forced); `extra` is copied into the record."""
        if not (force or self.due(step)):
            return None
        with torch.no_grad():
            loss = float(fn(theta.detach()))
        estimate = top_eigenvalue(
            fn, theta, self.method, self.exact_max_params, self.tol, self.max_restarts, self.seed
        )
        record = {
            "step": int(step),
            "sharpness": estimate.value,
            "loss": loss,
            "threshold": self.threshold,
            "method": estimate.method,
            "matvecs": estimate.matvecs,
            "converged": estimate.converged,
            **extra,
        }
        self.records.append(record)
        return record

    def last(self) -> dict[str, Any] | None:
        """The latest record (None before the first measurement)."""
        return self.records[-1] if self.records else None
