"""Distances between sample sets: Fréchet distance and KID (on pixels or on the features of an evaluation
CNN trained on clean data only), exact W2 and RBF-MMD for point clouds. These are FID/KID stand-ins: the
Inception network is replaced by a small CNN, so only orderings compare with published FIDs."""

from __future__ import annotations

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment
from torch import nn

from stages.core.progress import progress


def _psd_sqrt(matrix: np.ndarray) -> np.ndarray:
    values, vectors = np.linalg.eigh((matrix + matrix.T) / 2)
    return (vectors * np.sqrt(np.clip(values, 0, None))) @ vectors.T


def frechet_from_moments(mu1: np.ndarray, cov1: np.ndarray, mu2: np.ndarray, cov2: np.ndarray) -> float:
    """‖μ1 − μ2‖² + tr(Σ1 + Σ2 − 2 (Σ1^{1/2} Σ2 Σ1^{1/2})^{1/2}) (symmetric form, eigen-decompositions)."""
    root1 = _psd_sqrt(cov1)
    middle = _psd_sqrt(root1 @ cov2 @ root1)
    value = float(np.sum((mu1 - mu2) ** 2) + np.trace(cov1) + np.trace(cov2) - 2 * np.trace(middle))
    return max(value, 0.0)


def moments(features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and (unbiased) covariance of rows."""
    array = np.asarray(features, dtype=np.float64).reshape(len(features), -1)
    return array.mean(axis=0), np.atleast_2d(np.cov(array, rowvar=False))


def frechet_distance(first: np.ndarray, second: np.ndarray) -> float:
    """Fréchet distance between Gaussians fitted to two sets of rows (images are flattened)."""
    return frechet_from_moments(*moments(first), *moments(second))


def kid(first: np.ndarray, second: np.ndarray) -> float:
    """Kernel inception distance: the unbiased MMD² with the cubic kernel (x·y/d + 1)³."""
    a = np.asarray(first, dtype=np.float64).reshape(len(first), -1)
    b = np.asarray(second, dtype=np.float64).reshape(len(second), -1)
    d = a.shape[1]
    kaa, kbb, kab = (a @ a.T / d + 1) ** 3, (b @ b.T / d + 1) ** 3, (a @ b.T / d + 1) ** 3
    m, n = len(a), len(b)
    within_a = (kaa.sum() - np.trace(kaa)) / (m * (m - 1))
    within_b = (kbb.sum() - np.trace(kbb)) / (n * (n - 1))
    return float(within_a + within_b - 2 * kab.mean())


def frechet_bootstrap_se(first: np.ndarray, second: np.ndarray, resamples: int, seed: int) -> float:
    """Standard error of the Fréchet distance over bootstrap resamples of both sets (rows)."""
    rng = np.random.default_rng(seed)
    a, b = np.asarray(first).reshape(len(first), -1), np.asarray(second).reshape(len(second), -1)
    values = [
        frechet_distance(a[rng.integers(0, len(a), len(a))], b[rng.integers(0, len(b), len(b))])
        for _ in range(resamples)
    ]
    return float(np.std(values, ddof=1))


def wasserstein2(first: np.ndarray, second: np.ndarray) -> float:
    """Exact W2 between two equal-size empirical sets (optimal assignment of squared distances)."""
    a, b = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    if len(a) != len(b):
        raise ValueError(f"wasserstein2 needs equal sizes, got {len(a)} and {len(b)}")
    cost = ((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=2)
    rows, cols = linear_sum_assignment(cost)
    return float(np.sqrt(cost[rows, cols].mean()))


def mmd_rbf(first: np.ndarray, second: np.ndarray, bandwidth: float = 1.0) -> float:
    """Unbiased MMD² with the Gaussian kernel exp(−‖x − y‖² / (2 h²))."""
    a, b = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)

    def gram(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return np.exp(-((u[:, None, :] - v[None, :, :]) ** 2).sum(axis=2) / (2 * bandwidth**2))

    kaa, kbb = gram(a, a), gram(b, b)
    m, n = len(a), len(b)
    return float(
        (kaa.sum() - np.trace(kaa)) / (m * (m - 1))
        + (kbb.sum() - np.trace(kbb)) / (n * (n - 1))
        - 2 * gram(a, b).mean()
    )


class EvalCNN(nn.Module):
    """The evaluation network: two conv layers and a `features`-wide penultimate layer, trained to classify the
    clean training images; its penultimate activations are the features the distances use."""

    def __init__(self, side: int, classes: int, features: int = 64) -> None:
        super().__init__()
        self.convs = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(4),
        )
        self.features = nn.Sequential(nn.Flatten(), nn.Linear(32 * 16, features), nn.ReLU())
        self.head = nn.Linear(features, classes)
        self.side = side

    def embed(self, images: torch.Tensor) -> torch.Tensor:
        """Penultimate activations of images (N, side, side) or flat (N, side²)."""
        return self.features(self.convs(images.reshape(-1, 1, self.side, self.side)))

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(images))


def train_eval_cnn(
    images: np.ndarray, labels: np.ndarray, side: int, epochs: int, seed: int, features: int = 64
) -> EvalCNN:
    """Fit the evaluation CNN on clean training images and labels (Adam 1e-3, batch 64)."""
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    classes = int(labels.max()) + 1
    model = EvalCNN(side, classes, features)
    x = torch.as_tensor(images, dtype=torch.float32)
    y = torch.as_tensor(labels, dtype=torch.long)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in progress(range(epochs), "evaluation CNN epochs", total=epochs):
        order = torch.randperm(len(x), generator=generator)
        for start in range(0, len(x), 64):
            rows = order[start : start + 64]
            loss = nn.functional.cross_entropy(model(x[rows]), y[rows])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    return model.eval()


@torch.no_grad()
def embed(model: EvalCNN, images: np.ndarray) -> np.ndarray:
    """The evaluation CNN's features of images (float64)."""
    return model.embed(torch.as_tensor(images, dtype=torch.float32)).double().numpy()


@torch.no_grad()
def accuracy(model: EvalCNN, images: np.ndarray, labels: np.ndarray) -> float:
    """Share of images the evaluation CNN classifies correctly."""
    predicted = model(torch.as_tensor(images, dtype=torch.float32)).argmax(dim=1).numpy()
    return float(np.mean(predicted == labels))


KID_MAX_ROWS = 2000
"""KID uses at most this many rows of each set (its kernel matrices are n × n)."""


def image_distances(
    samples: np.ndarray,
    reference: np.ndarray,
    cnn: EvalCNN | None,
    reference_features: np.ndarray | None = None,
) -> dict[str, float]:
    """Fréchet distance in pixels, and (with a CNN) Fréchet distance and KID in its features (the reference's
    features may be passed precomputed; KID on the first `KID_MAX_ROWS` rows of each set)."""
    scores = {"fd_pixel": frechet_distance(samples, reference)}
    if cnn is not None:
        a = embed(cnn, samples)
        b = embed(cnn, reference) if reference_features is None else reference_features
        scores |= {
            "fd_feature": frechet_distance(a, b),
            "kid_feature": kid(a[:KID_MAX_ROWS], b[:KID_MAX_ROWS]),
        }
    return scores
