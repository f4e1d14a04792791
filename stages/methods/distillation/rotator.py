"""The rotator: offline PCA alignment of a cloud, plus the in-network sign flip by sign(mean sin(w₀x)).

A cloud X (n × 3) rotated by R has covariance R C Rᵀ, so its eigenvectors are R V: projecting R X on them gives
X V, up to one sign per axis. The network resolves the sign by flipping each axis x by sign(mean_n sin(w₀ x))
(0 maps to +1), so canonical(R X) = canonical(X) whenever the eigenvalues are distinct.
"""

from __future__ import annotations

import numpy as np
import torch

from stages.datasets.rotations import pca_align_all, uniform_rotations

__all__ = ["uniform_rotations"]


def centred(points: np.ndarray) -> np.ndarray:
    """Clouds (…, n, 3) minus their centroids."""
    return points - points.mean(axis=-2, keepdims=True)


def principal_axes(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (descending) and eigenvectors (columns, same order) of the covariance of one cloud (n × 3)."""
    x = centred(np.asarray(points, dtype=np.float64))
    values, vectors = np.linalg.eigh(x.T @ x / len(x))
    order = np.argsort(values)[::-1]
    return values[order], vectors[:, order]


def eigengaps(points: np.ndarray) -> np.ndarray:
    """Relative gaps (λ1 − λ2)/λ1 and (λ2 − λ3)/λ2 of one cloud: PCA axes are defined when both are > 0."""
    values, _ = principal_axes(points)
    return np.array([(values[0] - values[1]) / values[0], (values[1] - values[2]) / max(values[1], 1e-12)])


def pca_align(points: np.ndarray) -> np.ndarray:
    """Clouds (n × 3 or b × n × 3) centred and projected on their principal axes, largest variance first."""
    array = np.asarray(points)
    batch = array if array.ndim == 3 else array[None]
    aligned = pca_align_all(batch.astype(np.float64)).astype(array.dtype)
    return aligned if array.ndim == 3 else aligned[0]


def sign_flip(points: torch.Tensor, w0: float = 1.0) -> torch.Tensor:
    """Each axis of each cloud (b × n × 3) multiplied by sign(mean_n sin(w₀ x)), a zero sign read as +1."""
    sign = torch.sign(torch.sin(w0 * points).mean(dim=1, keepdim=True))
    return points * torch.where(sign == 0, torch.ones_like(sign), sign)


def canonical(points: np.ndarray, w0: float = 1.0) -> np.ndarray:
    """The rotator's canonical form of clouds (b × n × 3): PCA alignment, then the sign flip."""
    aligned = torch.as_tensor(pca_align(np.asarray(points, dtype=np.float64)))
    return sign_flip(aligned, w0).numpy()


def chamfer(first: np.ndarray, second: np.ndarray) -> float:
    """Symmetric Chamfer distance between two clouds (n × 3, m × 3): mean squared nearest-neighbour distance
    each way, summed."""
    d = ((first[:, None, :] - second[None, :, :]) ** 2).sum(-1)
    return float(d.min(axis=1).mean() + d.min(axis=0).mean())


def normalise_unit_sphere(points: torch.Tensor) -> torch.Tensor:
    """Clouds (b × n × 3) centred and scaled so that the farthest point lies on the unit sphere."""
    x = points - points.mean(dim=1, keepdim=True)
    radius = x.norm(dim=-1).amax(dim=1, keepdim=True)[..., None] + 1e-4
    return x / radius
