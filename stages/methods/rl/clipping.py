"""Per-sample gradient clipping, as GBRL applies it to the functional gradients before fitting a tree."""

from __future__ import annotations

import torch


def clip_per_sample(gradients: torch.Tensor, max_norm: float | None) -> torch.Tensor:
    """Clip each sample's gradient: rows of a (N, k) array to L2 norm ≤ max_norm, entries of an (N,) array to
    [−max_norm, max_norm]. None leaves the gradients as they are; the input is not modified."""
    if max_norm is None:
        return gradients
    if max_norm <= 0:
        raise ValueError(f"max_norm {max_norm} must be > 0")
    if gradients.ndim == 1:
        return torch.clamp(gradients, -max_norm, max_norm)
    norms = torch.linalg.vector_norm(gradients, dim=1, keepdim=True)
    scale = torch.clamp(max_norm / torch.clamp(norms, min=1e-12), max=1.0)
    return gradients * scale
