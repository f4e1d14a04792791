"""VI-Net: a truncated network, PCA then tanh into [−1, 1]ⁿ, the polynomial layer of per-class generators and a
linear head; the pieces to fit it on any labelled latent table and to count its parameters.

Fitting (`fit_vinet_head`): per class ≤ `max_points` random latents (the stochastic batch) → OAVI/ABM →
pruning by s(p), `keep` per class → G(z) → a linear head trained with G's coefficients by Adam (cross-entropy),
the base frozen. The baselines use the same head recipe: a linear probe on the pooled latent and a layer of as many
random monomials.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from stages.core.progress import progress
from stages.methods.ideals.avi import AVIOptions, IdealFit, fit_ideal
from stages.methods.ideals.layer import KeptGenerator, PolynomialLayer, coefficient_matrix, select_generators
from stages.methods.ideals.resnet import TruncatedResNet, count_parameters


class PCATanh(nn.Module):
    """x ↦ tanh(((x − μ) Wᵀ) / s): the top-k principal directions W of the training latents, each score divided by
    its standard deviation s (so tanh does not saturate), into (−1, 1)ᵏ."""

    def __init__(self, mean: np.ndarray, components: np.ndarray, scale: np.ndarray) -> None:
        super().__init__()
        self.register_buffer("mean", torch.as_tensor(mean, dtype=torch.float32))
        self.register_buffer("components", torch.as_tensor(components, dtype=torch.float32))
        self.register_buffer("scale", torch.as_tensor(scale, dtype=torch.float32))

    @classmethod
    def fit(cls, latents: np.ndarray, k: int) -> PCATanh:
        """PCA of `latents` (m, C) to k ≤ min(m, C) components (signs fixed: largest |loading| positive)."""
        latents = np.asarray(latents, dtype=np.float64)
        if not 1 <= k <= min(latents.shape):
            raise ValueError(
                f"PCA to {k} components needs 1 ≤ k ≤ min(points, dimensions) = {min(latents.shape)}"
            )
        mean = latents.mean(axis=0)
        _, singular, vt = np.linalg.svd(latents - mean, full_matrices=False)
        components = vt[:k]
        signs = np.sign(components[np.arange(k), np.abs(components).argmax(axis=1)])
        components *= signs[:, None]
        scale = singular[:k] / np.sqrt(max(len(latents) - 1, 1))
        return cls(mean, components, np.where(scale > 1e-12, scale, 1.0))

    @property
    def k(self) -> int:
        return int(self.components.shape[0])

    def parameter_count(self) -> int:
        """k·C loadings + C means + k scales."""
        return int(self.components.numel() + self.mean.numel() + self.scale.numel())

    def forward(self, latents: torch.Tensor) -> torch.Tensor:
        return torch.tanh(((latents - self.mean) @ self.components.T) / self.scale)


class Standardize(nn.Module):
    """A fixed affine map (x − μ)/σ with training statistics (foldable into the next linear layer: no parameters)."""

    def __init__(self, features: torch.Tensor) -> None:
        super().__init__()
        self.register_buffer("mean", features.mean(dim=0))
        self.register_buffer("std", features.std(dim=0).clamp_min(1e-6))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.mean) / self.std


class Head(nn.Module):
    """features (optional trainable layer) → standardize (statistics at initialisation) → linear."""

    def __init__(self, layer: nn.Module | None, inputs: torch.Tensor, n_classes: int) -> None:
        super().__init__()
        self.layer = layer if layer is not None else nn.Identity()
        with torch.no_grad():
            features = self.layer(inputs)
        self.standardize = Standardize(features)
        self.linear = nn.Linear(features.shape[1], n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(self.standardize(self.layer(x)))

    def parameter_count(self) -> int:
        """The linear layer plus the layer's non-zero coefficients (a polynomial layer) or its parameters."""
        layer = self.layer
        inner = (
            layer.nonzero_coefficients() if isinstance(layer, PolynomialLayer) else count_parameters(layer)
        )
        return inner + count_parameters(self.linear)


@dataclass(frozen=True)
class HeadOptions:
    """The head recipe every model gets: epochs, batch size, Adam learning rate."""

    epochs: int = 3
    batch_size: int = 128
    lr: float = 0.01


def train_head(
    head: Head, inputs: torch.Tensor, labels: torch.Tensor, options: HeadOptions, seed: int
) -> Head:
    """Adam on cross-entropy over shuffled mini-batches (order fixed by `seed`); every parameter of `head` trains.
    A polynomial layer's monomials of the (fixed) inputs are evaluated once; one torch thread (small matrices)."""
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(head.parameters(), lr=options.lr)
    layer = head.layer
    if isinstance(layer, PolynomialLayer):
        with torch.no_grad():
            inputs = layer.monomials(inputs)

        def forward(rows: torch.Tensor) -> torch.Tensor:
            return head.linear(head.standardize(layer.from_monomials(inputs[rows])))
    else:

        def forward(rows: torch.Tensor) -> torch.Tensor:
            return head(inputs[rows])

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    head.train()
    try:
        for _ in range(options.epochs):
            order = torch.randperm(len(inputs), generator=generator)
            for start in range(0, len(order), options.batch_size):
                rows = order[start : start + options.batch_size]
                optimizer.zero_grad()
                F.cross_entropy(forward(rows), labels[rows]).backward()
                optimizer.step()
    finally:
        torch.set_num_threads(threads)
    return head.eval()


@torch.no_grad()
def predict(
    model: Callable[[torch.Tensor], torch.Tensor], inputs: torch.Tensor, batch: int = 1024
) -> np.ndarray:
    """Argmax class of every row."""
    return np.concatenate(
        [model(inputs[i : i + batch]).argmax(dim=1).numpy() for i in range(0, len(inputs), batch)]
    )


def sample_per_class(labels: np.ndarray, max_points: int, seed: int) -> dict[int, np.ndarray]:
    """Per class, ≤ `max_points` row indices drawn without replacement (sorted), seeded."""
    rng = np.random.default_rng(seed)
    result = {}
    for label in np.unique(labels):
        rows = np.flatnonzero(labels == label)
        if len(rows) > max_points:
            rows = np.sort(rng.choice(rows, size=max_points, replace=False))
        result[int(label)] = rows
    return result


def fit_class_ideals(
    z: np.ndarray, labels: np.ndarray, options: AVIOptions, max_points: int, seed: int, show: bool = False
) -> tuple[dict[int, IdealFit], dict[int, np.ndarray]]:
    """OAVI/ABM per class on ≤ `max_points` random points of that class; returns the fits and the points used.
    BLAS runs on one thread here: the matrices are small (≤ a few hundred columns), where threads only add waits."""
    from threadpoolctl import threadpool_limits

    rows = sample_per_class(labels, max_points, seed)
    points = {label: z[index] for label, index in rows.items()}
    items = (
        progress(points.items(), "vanishing ideals per class", total=len(points)) if show else points.items()
    )
    with threadpool_limits(1):
        return {label: fit_ideal(values, options) for label, values in items}, points


def polynomial_layer(
    fits: Mapping[int, IdealFit], points: Mapping[int, np.ndarray], keep: int
) -> tuple[PolynomialLayer, list[KeptGenerator]]:
    """The layer of the `keep` best generators per class by s(p) (scored on the fitting points of the others)."""
    kept = select_generators({label: fit.generators for label, fit in fits.items()}, points, keep)
    if not kept:
        raise ValueError("no class has a generator at this ψ and degree cap: raise ψ or the degree")
    terms, matrix = coefficient_matrix(kept)
    return PolynomialLayer(terms, matrix), kept


class VINet(nn.Module):
    """Truncated base (frozen) → pooled latent → PCA + tanh → polynomial layer → linear head."""

    def __init__(self, base: TruncatedResNet, pca: PCATanh, head: Head) -> None:
        super().__init__()
        self.base, self.pca, self.head = base, pca, head

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.pca(self.base(images)))

    def parameter_count(self) -> int:
        """Base (the convolutions it runs) + PCA + non-zero coefficients + head."""
        return self.base.parameter_count() + self.pca.parameter_count() + self.head.parameter_count()


class ProbeNet(nn.Module):
    """Truncated base (frozen) → pooled latent → head (linear probe)."""

    def __init__(self, base: TruncatedResNet, head: Head) -> None:
        super().__init__()
        self.base, self.head = base, head

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.base(images))

    def parameter_count(self) -> int:
        return self.base.parameter_count() + self.head.parameter_count()


def class_vanishing(
    kept: Sequence[KeptGenerator], layer: PolynomialLayer, z: torch.Tensor, labels: np.ndarray
) -> np.ndarray:
    """(P, K): mean G_j(z) of kept generator j over the points of each class (the own-class block ≈ 0)."""
    with torch.no_grad():
        values = layer(z).numpy()
    classes = sorted({item.label for item in kept} | set(np.unique(labels).tolist()))
    return np.stack([values[labels == label].mean(axis=0) for label in classes], axis=1)


def head_from_tensors(tensors: Mapping[str, np.ndarray], prefix: str = "") -> Head:
    """A trained VI-Net head rebuilt from its saved tensors (`terms`, `coefficients`, `mask`, `standardize_*`,
    `linear_*`, each key prefixed by `prefix`)."""
    terms = [tuple(int(a) for a in row) for row in tensors[f"{prefix}terms"]]
    layer = PolynomialLayer(terms, tensors[f"{prefix}mask"])
    with torch.no_grad():
        layer.coefficients.copy_(torch.as_tensor(tensors[f"{prefix}coefficients"]))
    weight = torch.as_tensor(tensors[f"{prefix}linear_weight"])
    head = Head.__new__(Head)
    nn.Module.__init__(head)
    head.layer = layer
    head.standardize = Standardize(torch.zeros(2, weight.shape[1]))
    head.standardize.mean.copy_(torch.as_tensor(tensors[f"{prefix}standardize_mean"]))
    head.standardize.std.copy_(torch.as_tensor(tensors[f"{prefix}standardize_std"]))
    head.linear = nn.Linear(weight.shape[1], weight.shape[0])
    with torch.no_grad():
        head.linear.weight.copy_(weight)
        head.linear.bias.copy_(torch.as_tensor(tensors[f"{prefix}linear_bias"]))
    return head.eval()


def pca_from_tensors(tensors: Mapping[str, np.ndarray], prefix: str = "") -> PCATanh:
    """A fitted PCA + tanh rebuilt from `pca_mean`, `pca_components`, `pca_scale`."""
    return PCATanh(
        tensors[f"{prefix}pca_mean"], tensors[f"{prefix}pca_components"], tensors[f"{prefix}pca_scale"]
    )
