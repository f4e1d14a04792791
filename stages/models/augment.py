"""Image augmentations vectorised over a batch, each sample drawing its own random parameters.

Images are `(N, C, H, W)` tensors with values in [0, 1] (see `UnitScaler` in `stages.models.training`).

- `flip_crop`: the standard weak augmentation (random crop from a zero-padded image = a translation of up to
  `padding` pixels, and a horizontal flip with probability ½).
- `rand_augment`: a RandAugment-style strong augmentation: each image gets `n_ops` operations drawn uniformly
  from `STRONG_OPS` (identity, auto-contrast, brightness, contrast, sharpness, solarise, posterise, rotate,
  shear x/y, translate x/y), each at a magnitude drawn uniformly up to `magnitude` ∈ (0, 1].
- `cutout`: a random square of side `size` set to 0.5 grey, per image (FixMatch's strong view ends with it).

Every function takes an explicit `torch.Generator`, so a seed fixes the augmented batch.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch.nn import functional as F

from stages.core.errors import PipelineError

STRONG_OPS = (
    "identity",
    "autocontrast",
    "brightness",
    "contrast",
    "sharpness",
    "solarize",
    "posterize",
    "rotate",
    "shear_x",
    "shear_y",
    "translate_x",
    "translate_y",
)
_GEOMETRIC = ("rotate", "shear_x", "shear_y", "translate_x", "translate_y")


def image_shape_of(n_features: int, shape: tuple[int, ...] | None, key: str) -> tuple[int, int, int]:
    """`(C, H, W)` for flat rows of `n_features`: the given (H, W) or (C, H, W), or a square grey image.

    Raises a `PipelineError` naming `key` when the features cannot form that image.
    """
    if shape is None:
        side = math.isqrt(n_features)
        if side * side != n_features:
            raise PipelineError(
                f"{key}: {n_features} features are not a square grey image; set the image shape ((H, W) or (C, H, W))"
            )
        shape = (side, side)
    if len(shape) not in (2, 3) or math.prod(shape) != n_features:
        raise PipelineError(f"{key}: image shape {list(shape)} does not hold {n_features} features")
    return (1, *shape) if len(shape) == 2 else tuple(shape)  # type: ignore[return-value]


def flip_crop(images: torch.Tensor, padding: int, flip: bool, generator: torch.Generator) -> torch.Tensor:
    """Random `padding`-pixel translations (zero fill) and, if `flip`, random horizontal flips."""
    n_images, _, height, width = images.shape
    padded = F.pad(images, (padding,) * 4)
    dy = torch.randint(0, 2 * padding + 1, (n_images,), generator=generator)
    dx = torch.randint(0, 2 * padding + 1, (n_images,), generator=generator)
    rows = torch.arange(height)[None, :] + dy[:, None]
    columns = torch.arange(width)[None, :] + dx[:, None]
    if flip:
        mirrored = torch.rand(n_images, generator=generator) < 0.5
        columns = torch.where(mirrored[:, None], columns.flip(1), columns)
    batch = torch.arange(n_images)[:, None, None]
    cropped = padded.permute(0, 2, 3, 1)[batch, rows[:, :, None], columns[:, None, :]]
    return cropped.permute(0, 3, 1, 2).contiguous()


def cutout(images: torch.Tensor, size: int, generator: torch.Generator) -> torch.Tensor:
    """Each image with one random `size` × `size` square (clipped at the border) set to 0.5."""
    n_images, _, height, width = images.shape
    cy = torch.randint(0, height, (n_images,), generator=generator)[:, None, None]
    cx = torch.randint(0, width, (n_images,), generator=generator)[:, None, None]
    ys = torch.arange(height)[None, :, None]
    xs = torch.arange(width)[None, None, :]
    half = size // 2
    inside = (ys >= cy - half) & (ys < cy - half + size) & (xs >= cx - half) & (xs < cx - half + size)
    return torch.where(inside[:, None], torch.full_like(images, 0.5), images)


def _blend(images: torch.Tensor, other: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    return (other + factor[:, None, None, None] * (images - other)).clamp(0.0, 1.0)


def _sharpness_blur(images: torch.Tensor) -> torch.Tensor:
    kernel = torch.tensor([[1.0, 1.0, 1.0], [1.0, 5.0, 1.0], [1.0, 1.0, 1.0]]) / 13.0
    channels = images.shape[1]
    weight = kernel.expand(channels, 1, 3, 3)
    return F.conv2d(F.pad(images, (1, 1, 1, 1), mode="replicate"), weight, groups=channels)


def _colour_op(name: str, images: torch.Tensor, strength: torch.Tensor, sign: torch.Tensor) -> torch.Tensor:
    """A photometric op on `images` at per-image `strength` ∈ [0, 1] (`sign` ±1 picks the direction)."""
    if name == "identity":
        return images
    if name == "autocontrast":
        low = images.amin(dim=(2, 3), keepdim=True)
        high = images.amax(dim=(2, 3), keepdim=True)
        return torch.where(high > low, (images - low) / (high - low).clamp_min(1e-6), images)
    if name == "brightness":
        return _blend(images, torch.zeros_like(images), 1.0 + 0.9 * strength * sign)
    if name == "contrast":
        mean = images.mean(dim=(1, 2, 3), keepdim=True).expand_as(images)
        return _blend(images, mean, 1.0 + 0.9 * strength * sign)
    if name == "sharpness":
        return _blend(images, _sharpness_blur(images), 1.0 + 0.9 * strength * sign)
    if name == "solarize":
        threshold = (1.0 - strength)[:, None, None, None]
        return torch.where(images >= threshold, 1.0 - images, images)
    if name == "posterize":
        levels = torch.pow(2.0, (8 - (4 * strength).round()).clamp(4, 8))[:, None, None, None]
        return torch.floor(images * (levels - 1) + 0.5) / (levels - 1)
    raise ValueError(name)


def _affine(name: str, strength: torch.Tensor, sign: torch.Tensor) -> torch.Tensor:
    """Per-image 2 × 3 affine matrices (normalised coordinates) for a geometric op."""
    theta = torch.zeros(len(strength), 2, 3)
    theta[:, 0, 0] = 1.0
    theta[:, 1, 1] = 1.0
    amount = strength * sign
    if name == "rotate":
        angle = amount * math.radians(30.0)
        theta[:, 0, 0], theta[:, 0, 1] = angle.cos(), -angle.sin()
        theta[:, 1, 0], theta[:, 1, 1] = angle.sin(), angle.cos()
    elif name == "shear_x":
        theta[:, 0, 1] = 0.3 * amount
    elif name == "shear_y":
        theta[:, 1, 0] = 0.3 * amount
    elif name == "translate_x":
        theta[:, 0, 2] = 0.6 * amount  # up to 30 % of the width (normalised coordinates span 2)
    elif name == "translate_y":
        theta[:, 1, 2] = 0.6 * amount
    return theta


def rand_augment(
    images: torch.Tensor, n_ops: int, magnitude: float, generator: torch.Generator
) -> torch.Tensor:
    """RandAugment-style strong views: `n_ops` random ops per image at random magnitudes up to `magnitude`."""
    n_images = len(images)
    out = images
    for _ in range(n_ops):
        choice = torch.randint(0, len(STRONG_OPS), (n_images,), generator=generator)
        strength = magnitude * torch.rand(n_images, generator=generator)
        sign = torch.where(torch.rand(n_images, generator=generator) < 0.5, -1.0, 1.0)
        theta = torch.zeros(n_images, 2, 3)
        theta[:, 0, 0] = theta[:, 1, 1] = 1.0
        geometric = torch.zeros(n_images, dtype=torch.bool)
        for index, name in enumerate(STRONG_OPS):
            chosen = choice == index
            if not bool(chosen.any()):
                continue
            if name in _GEOMETRIC:
                theta[chosen] = _affine(name, strength[chosen], sign[chosen])
                geometric |= chosen
            else:
                out = out.clone() if out is images else out
                out[chosen] = _colour_op(name, out[chosen], strength[chosen], sign[chosen])
        if bool(geometric.any()):
            grid = F.affine_grid(theta[geometric], list(out[geometric].shape), align_corners=False)
            out = out.clone() if out is images else out
            out[geometric] = F.grid_sample(out[geometric], grid, padding_mode="zeros", align_corners=False)
    return out


BatchAugment = Callable[[torch.Tensor, torch.Generator], torch.Tensor]


def weak_augment(image_shape: tuple[int, int, int], padding: int, flip: bool) -> BatchAugment:
    """Flat rows → flip/crop → flat rows: the weak view, as a batch function for the training loop."""

    def apply(rows: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        images = rows.reshape(-1, *image_shape)
        return flip_crop(images, padding, flip, generator).reshape(len(rows), -1)

    return apply


def strong_augment(
    image_shape: tuple[int, int, int],
    padding: int,
    flip: bool,
    n_ops: int,
    magnitude: float,
    cutout_size: int,
) -> BatchAugment:
    """Flat rows → flip/crop → RandAugment-style ops → cutout → flat rows: FixMatch's strong view."""

    def apply(rows: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        images = flip_crop(rows.reshape(-1, *image_shape), padding, flip, generator)
        images = rand_augment(images, n_ops, magnitude, generator)
        if cutout_size > 0:
            images = cutout(images, cutout_size, generator)
        return images.reshape(len(rows), -1)

    return apply
