"""Augmentations the sampler routes samples to, vectorised over a batch of flat feature rows.

- `shift_flip` (images): a random translation of up to `max_shift` pixels (zero fill) and, if `flip`, a
  random horizontal flip; rows are reshaped to `image_shape` ((H, W) or (C, H, W)) and flattened back.
- `feature_noise` (any features): Gaussian jitter of `noise_std` per-feature standard deviations.
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import Field
from torch.nn import functional as F

from stages.core.errors import PipelineError
from stages.core.params import StrictModel


class AugmentationParams(StrictModel):
    """Which augmentation and how strong."""

    kind: Literal["shift_flip", "feature_noise"] = "shift_flip"
    image_shape: tuple[int, ...] | None = Field(
        None, description="(H, W) or (C, H, W); None: square grey image"
    )
    max_shift: int = Field(2, ge=0)
    flip: bool = True
    noise_std: float = Field(0.1, ge=0, description="feature_noise: std in units of each feature's std")


def image_shape_for(params: AugmentationParams, n_features: int, key: str) -> tuple[int, ...]:
    """The image shape rows reshape to: the given one, or a square grey image; an error names `key`."""
    if params.image_shape is not None:
        shape = params.image_shape
    else:
        side = round(n_features**0.5)
        if side * side != n_features:
            raise PipelineError(
                f"{key}.image_shape: {n_features} features are not a square image; set the shape, or use "
                f"{key}.kind: feature_noise"
            )
        shape = (side, side)
    if len(shape) not in (2, 3) or int(torch.tensor(shape).prod()) != n_features:
        raise PipelineError(f"{key}.image_shape {list(shape)} does not hold {n_features} features")
    return shape


def shift_flip(
    rows: torch.Tensor, shape: tuple[int, ...], max_shift: int, flip: bool, generator: torch.Generator
) -> torch.Tensor:
    """Randomly translated (and flipped) copies of flat image rows: one flat gather from the zero-padded batch."""
    n_rows, height, width = len(rows), shape[-2], shape[-1]
    padded_height, padded_width = height + 2 * max_shift, width + 2 * max_shift
    padded = F.pad(rows.reshape(n_rows, -1, height, width), (max_shift,) * 4)
    channels = padded.shape[1]
    dy = torch.randint(0, 2 * max_shift + 1, (n_rows,), generator=generator)
    dx = torch.randint(0, 2 * max_shift + 1, (n_rows,), generator=generator)
    columns = torch.arange(width)[None, :] + dx[:, None]
    if flip:
        mirrored = torch.rand(n_rows, generator=generator) < 0.5
        columns = torch.where(mirrored[:, None], columns.flip(1), columns)
    image_rows = torch.arange(height)[None, :] + dy[:, None]
    plane = padded_height * padded_width
    start = (torch.arange(n_rows) * channels * plane)[:, None, None, None] + (torch.arange(channels) * plane)[
        None, :, None, None
    ]
    flat_index = start + image_rows[:, None, :, None] * padded_width + columns[:, None, None, :]
    return padded.reshape(-1)[flat_index.reshape(n_rows, -1)]


def feature_noise(
    rows: torch.Tensor, scale: torch.Tensor, noise_std: float, generator: torch.Generator
) -> torch.Tensor:
    """Rows plus Gaussian noise of `noise_std` × the per-feature `scale`."""
    return rows + noise_std * scale * torch.randn(rows.shape, generator=generator)


class Augmenter:
    """Applies the configured augmentation to the rows a mask selects (others pass through unchanged)."""

    def __init__(
        self, params: AugmentationParams, n_features: int, feature_scale: torch.Tensor, key: str
    ) -> None:
        self.params = params
        self.feature_scale = feature_scale
        self.shape = image_shape_for(params, n_features, key) if params.kind == "shift_flip" else None

    def __call__(self, rows: torch.Tensor, mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        if not bool(mask.any()):
            return rows
        chosen = rows[mask]
        if self.shape is not None:
            changed = shift_flip(chosen, self.shape, self.params.max_shift, self.params.flip, generator)
        else:
            changed = feature_noise(chosen, self.feature_scale, self.params.noise_std, generator)
        out = rows.clone()
        out[mask] = changed
        return out
