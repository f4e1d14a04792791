"""A K-armed linear bandit: fixed arms X ∈ R^{K×d}, unknown θ ∈ R^d, rewards ⟨x, θ⟩ + N(0, σ²).

Regret is pseudo-regret: pulling arm a costs max_b ⟨x_b, θ⟩ − ⟨x_a, θ⟩, whatever the noise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stages.core.errors import PipelineError


class BanditInputError(PipelineError):
    """A bandit instance or its parameters are unusable; the message names the file or key."""


def _finite(values: np.ndarray, what: str) -> None:
    bad = np.argwhere(~np.isfinite(values))
    if len(bad):
        where = ", ".join(str(tuple(int(i) for i in index)) for index in bad[:3])
        raise BanditInputError(f"{what}: {len(bad)} value(s) are NaN or infinite (first at index {where})")


def validate_instance(
    arms: np.ndarray,
    theta: np.ndarray,
    horizon: int = 1,
    arms_source: str = "arms",
    theta_source: str = "theta",
) -> None:
    """Raise :class:`BanditInputError` naming the source unless the instance is usable.

    Needs K ≥ 2 arms of dimension d ≥ 1 that span R^d (rank d: otherwise θ is not identifiable and the
    optimal design is degenerate), finite values, θ of length d and a horizon T ≥ 1.
    """
    arms = np.asarray(arms)
    if arms.ndim != 2:
        raise BanditInputError(f"{arms_source}: arms must be a K × d matrix, got shape {arms.shape}")
    n_arms, dim = arms.shape
    if dim < 1:
        raise BanditInputError(f"{arms_source}: d = {dim}; arms need at least one feature (d ≥ 1)")
    if n_arms < 2:
        raise BanditInputError(f"{arms_source}: K = {n_arms}; a bandit needs at least two arms (K ≥ 2)")
    _finite(arms.astype(np.float64), arms_source)
    rank = int(np.linalg.matrix_rank(arms.astype(np.float64)))
    if rank < dim:
        raise BanditInputError(
            f"{arms_source}: the {n_arms} × {dim} arm matrix has rank {rank} < d = {dim} (rank-deficient): "
            "drop redundant features or add arms that span R^d"
        )
    theta = np.asarray(theta, dtype=np.float64)
    if theta.shape != (dim,):
        raise BanditInputError(f"{theta_source}: θ must have d = {dim} entries, got shape {theta.shape}")
    _finite(theta, theta_source)
    if isinstance(horizon, bool) or int(horizon) != horizon or horizon < 1:
        raise BanditInputError(f"horizon: T = {horizon!r}; the horizon must be an integer ≥ 1")


@dataclass(frozen=True)
class LinearBandit:
    """Arms `arms` (K × d), parameter `theta` (d), Gaussian noise of standard deviation `noise_sd`."""

    arms: np.ndarray
    theta: np.ndarray
    noise_sd: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "arms", np.ascontiguousarray(self.arms, dtype=np.float64))
        object.__setattr__(self, "theta", np.asarray(self.theta, dtype=np.float64))
        validate_instance(self.arms, self.theta)
        if not np.isfinite(self.noise_sd) or self.noise_sd < 0:
            raise BanditInputError(f"noise_sd: {self.noise_sd!r}; the noise standard deviation must be ≥ 0")

    @property
    def n_arms(self) -> int:
        return self.arms.shape[0]

    @property
    def dim(self) -> int:
        return self.arms.shape[1]

    @property
    def means(self) -> np.ndarray:
        """Expected reward ⟨x_a, θ⟩ of every arm."""
        return self.arms @ self.theta

    @property
    def best_arm(self) -> int:
        """Index of an arm with the largest mean (the first, on ties)."""
        return int(np.argmax(self.means))

    @property
    def gaps(self) -> np.ndarray:
        """Pseudo-regret of one pull of each arm: max mean − its mean."""
        means = self.means
        return means.max() - means

    def rewards(self, pulled: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Noisy rewards of the pulled arm indices, drawn together (one batch)."""
        pulled = np.asarray(pulled, dtype=np.int64)
        return self.means[pulled] + self.noise_sd * rng.standard_normal(len(pulled))


def uniform_instance(n_arms: int, dim: int, rng: np.random.Generator) -> LinearBandit:
    """Arms and θ with independent U[0, 1] entries, noise N(0, 1). Ours: the E4 authors' random instances
    are :func:`e4_code_instance` (θ = e₁, arm 0 = θ)."""
    return LinearBandit(rng.uniform(0.0, 1.0, (n_arms, dim)), rng.uniform(0.0, 1.0, dim))


def gaussian_instance(n_arms: int, dim: int, rng: np.random.Generator) -> LinearBandit:
    """Arms with independent N(0, 1/d) entries (unit norm on average), θ ~ U[0, 1]^d, noise N(0, 1)."""
    return LinearBandit(rng.standard_normal((n_arms, dim)) / np.sqrt(dim), rng.uniform(0.0, 1.0, dim))


def e4_code_instance(n_arms: int, dim: int, rng: np.random.Generator) -> LinearBandit:
    """The E4 authors' random instances (`main.py --verbose`): θ = e₁, arms U[0, 1]^d with arm 0 replaced by θ
    (the best arm, mean 1, listed first: shuffle the rows before a comparison that could depend on order)."""
    theta = np.zeros(dim)
    theta[0] = 1.0
    arms = rng.uniform(0.0, 1.0, (n_arms, dim))
    arms[0] = theta
    return LinearBandit(arms, theta)


def shuffled(bandit: LinearBandit, rng: np.random.Generator) -> LinearBandit:
    """The same instance with its arms in a random order (θ and noise unchanged)."""
    return LinearBandit(bandit.arms[rng.permutation(bandit.n_arms)], bandit.theta, bandit.noise_sd)


INSTANCES = {"uniform": uniform_instance, "gaussian": gaussian_instance, "e4_code": e4_code_instance}
