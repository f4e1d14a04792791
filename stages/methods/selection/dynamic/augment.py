"""The augmentation every method can be offered, applied to a whole epoch's routed rows in one vectorised call.

- `shift_flip` (images): the shared `stages.models.augment.flip_crop` — a random translation of up to
  `max_shift` pixels (zero fill) and, if `flip`, a random horizontal flip; flat rows are reshaped to
  `image_shape` ((H, W) or (C, H, W)) and flattened back.
- `feature_noise` (any features): Gaussian jitter of `noise_std` per-feature standard deviations.

:class:`Augmenter` changes the masked rows in place (the caller owns the rows, e.g. an epoch's gathered
batch), so there is no copy of the unmasked rows.
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import Field

from stages.core.params import StrictModel
from stages.models.augment import flip_crop, image_shape_of


class AugmentationParams(StrictModel):
    """Which augmentation and how strong (the same for every method that is offered it)."""

    kind: Literal["shift_flip", "feature_noise"] = "shift_flip"
    image_shape: tuple[int, ...] | None = Field(
        None, description="(H, W) or (C, H, W); None: square grey image"
    )
    max_shift: int = Field(2, ge=0)
    flip: bool = True
    noise_std: float = Field(0.1, ge=0, description="feature_noise: std in units of each feature's std")


def feature_noise(
    rows: torch.Tensor, scale: torch.Tensor, noise_std: float, generator: torch.Generator
) -> torch.Tensor:
    """Rows plus Gaussian noise of `noise_std` × the per-feature `scale`."""
    return rows + noise_std * scale * torch.randn(rows.shape, generator=generator)


class Augmenter:
    """Applies the configured augmentation to the rows a mask selects; the others are left untouched."""

    def __init__(
        self, params: AugmentationParams, n_features: int, feature_scale: torch.Tensor, key: str
    ) -> None:
        self.params = params
        self.feature_scale = feature_scale
        self.shape = (
            image_shape_of(n_features, params.image_shape, f"{key}.image_shape")
            if params.kind == "shift_flip"
            else None
        )

    def transform(self, rows: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """Augmented copies of `rows` (flat feature rows)."""
        if self.shape is None:
            return feature_noise(rows, self.feature_scale, self.params.noise_std, generator)
        images = rows.reshape(len(rows), *self.shape)
        return flip_crop(images, self.params.max_shift, self.params.flip, generator).reshape(len(rows), -1)

    def __call__(self, rows: torch.Tensor, mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """`rows` with the masked ones replaced by augmented copies, in place; returns `rows`."""
        if bool(mask.any()):
            rows[mask] = self.transform(rows[mask], generator)
        return rows
