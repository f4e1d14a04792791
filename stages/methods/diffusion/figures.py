"""Figures of the deconvolution: sample grids, E_k beside the clean originals, distance by round (PNG, Agg)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from stages.core.metrics import new_figure, save_figure


def _tile(images: np.ndarray, columns: int) -> np.ndarray:
    """Images (N, H, W) in [−1, 1] tiled into one array, `columns` a row, 1-pixel gaps."""
    n, height, width = images.shape
    rows = int(np.ceil(n / columns))
    canvas = np.full((rows * (height + 1) - 1, columns * (width + 1) - 1), np.nan)
    for index, image in enumerate(images):
        r, c = divmod(index, columns)
        canvas[r * (height + 1) : r * (height + 1) + height, c * (width + 1) : c * (width + 1) + width] = (
            image
        )
    return canvas


def as_images(samples: np.ndarray) -> np.ndarray:
    """Samples as (N, H, W): square images from flat rows, unchanged when already 2-D."""
    array = np.asarray(samples)
    if array.ndim == 3:
        return array
    side = round(float(np.sqrt(array.shape[1])))
    if side * side != array.shape[1]:
        raise ValueError(f"cannot show rows of {array.shape[1]} values as square images")
    return array.reshape(len(array), side, side)


def sample_grids_png(grids: Mapping[str, np.ndarray], path: str | Path, columns: int = 8) -> None:
    """One panel of samples per label (images in [−1, 1])."""
    labels = list(grids)
    figure, axes = new_figure(2.4 * len(labels), 2.8, ncols=len(labels))
    axes = np.atleast_1d(axes)
    for axis, label in zip(axes, labels, strict=True):
        axis.imshow(_tile(np.clip(as_images(grids[label]), -1, 1), columns), cmap="gray_r", vmin=-1, vmax=1)
        axis.set_title(label, fontsize=8)
        axis.axis("off")
    save_figure(figure, path)


def denoised_png(rows: Mapping[str, np.ndarray], path: str | Path) -> None:
    """Rows of images (originals, noisy y, E_1, ..., E_K), one column per image."""
    labels = list(rows)
    count = len(next(iter(rows.values())))
    figure, axes = new_figure(0.5 * count + 1.0, 0.55 * len(labels) + 0.4, nrows=len(labels))
    axes = np.atleast_1d(axes)
    for axis, label in zip(axes, labels, strict=True):
        axis.imshow(_tile(np.clip(as_images(rows[label]), -1, 1), count), cmap="gray_r", vmin=-1, vmax=1)
        axis.set_ylabel(label, rotation=0, ha="right", va="center", fontsize=7)
        axis.set_xticks([])
        axis.set_yticks([])
    save_figure(figure, path)


def distance_by_round_png(
    curves: Mapping[str, tuple[Sequence[int], Sequence[float]]],
    path: str | Path,
    ylabel: str,
    title: str,
    references: Mapping[str, float] | None = None,
) -> None:
    """Distance against round k, one line per label; dashed horizontal reference levels."""
    figure, axis = new_figure(6.0, 4.0)
    for label, (ks, values) in curves.items():
        axis.plot(ks, values, marker="o", label=label)
    for label, value in (references or {}).items():
        axis.axhline(value, linestyle="--", linewidth=0.8, color="grey")
        axis.annotate(label, (0, value), fontsize=7, color="grey", va="bottom")
    axis.xaxis.get_major_locator().set_params(integer=True)
    axis.set_xlabel("round k (0: the start)")
    axis.set_ylabel(ylabel)
    axis.set_title(title, fontsize=9)
    axis.legend(fontsize=7, loc="upper right")
    save_figure(figure, path)
