"""Rotations of clouds for the point-cloud settings: uniform SO(3) draws and offline PCA alignment (NumPy)."""

from __future__ import annotations

import numpy as np


def uniform_rotations(count: int, rng: np.random.Generator) -> np.ndarray:
    """`count` rotation matrices drawn uniformly (Haar) from SO(3): QR of Gaussian matrices, signs fixed."""
    q, r = np.linalg.qr(rng.standard_normal((count, 3, 3)))
    q = q * np.sign(np.diagonal(r, axis1=1, axis2=2))[:, None, :]
    flip = np.linalg.det(q) < 0
    q[flip, :, 0] *= -1
    return q


def pca_align_all(clouds: np.ndarray) -> np.ndarray:
    """Each cloud (b × n × 3) centred and projected on its covariance eigenvectors, largest variance first."""
    x = clouds - clouds.mean(axis=1, keepdims=True)
    covariance = np.einsum("bni,bnj->bij", x, x) / x.shape[1]
    values, vectors = np.linalg.eigh(covariance)
    order = np.argsort(values, axis=1)[:, ::-1]
    vectors = np.take_along_axis(vectors, order[:, None, :], axis=2)
    return np.einsum("bni,bij->bnj", x, vectors)
