"""Static core-set selection: one interface, one explicit registry, and the class-balance helpers.

A selector picks `budget` row indices from a pool given its features, labels and (for score-based methods) a
training trace. Register a new one with ``@SELECTORS.register("name")`` on a `CoresetSelector` subclass;
build one from params with :func:`make_selector`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from stages.core.errors import PipelineError
from stages.core.params import StrictModel
from stages.core.registry import Registry
from stages.models.trace import TrainingTrace


@dataclass(frozen=True)
class SelectionPool:
    """The pool to select from: (n, d) features, (n,) integer labels, optional per-sample training trace."""

    features: np.ndarray
    labels: np.ndarray
    trace: TrainingTrace | None = None

    def __post_init__(self) -> None:
        if len(self.features) != len(self.labels):
            raise PipelineError(f"pool has {len(self.features)} feature rows but {len(self.labels)} labels")
        if self.trace is not None and self.trace.loss.shape[0] != len(self.labels):
            raise PipelineError(
                f"trace has {self.trace.loss.shape[0]} rows but the pool has {len(self.labels)}"
            )

    def __len__(self) -> int:
        return len(self.labels)


class NoOptions(StrictModel):
    """A selector without options."""


class BalanceOption(StrictModel):
    """Options of selectors that can split the budget evenly over classes (off by default)."""

    balance: bool = Field(False, description="split the budget evenly over classes (class quotas)")


class BalancedByDefault(StrictModel):
    """Options of selectors that split the budget evenly over classes unless told not to (DeepCore's default)."""

    balance: bool = Field(True, description="split the budget evenly over classes (DeepCore's default)")


class CoresetSelector(ABC):
    """Base class of static core-set selectors."""

    name: ClassVar[str] = ""
    needs_trace: ClassVar[bool] = False
    min_trace_epochs: ClassVar[int] = 1
    """The fewest traced epochs the selector can score from (params models check it before any training)."""
    uses_features: ClassVar[bool] = True
    Options: ClassVar[type[StrictModel]] = NoOptions

    def __init__(self, options: StrictModel | None = None) -> None:
        self.options = options if options is not None else self.Options()

    def __call__(self, pool: SelectionPool, budget: int, rng: np.random.Generator) -> np.ndarray:
        """Select `budget` unique row indices of `pool`, sorted ascending."""
        if not 1 <= budget <= len(pool):
            raise PipelineError(
                f"{self.name}: budget {budget} must be between 1 and the pool size {len(pool)}"
            )
        if self.needs_trace and pool.trace is None:
            raise PipelineError(f"{self.name}: needs a training trace (loss per sample and epoch)")
        chosen = np.asarray(self.select(pool, budget, rng), dtype=np.int64)
        if len(chosen) != budget or len(np.unique(chosen)) != budget:
            raise AssertionError(f"{self.name} returned {len(chosen)} indices for budget {budget}")
        return np.sort(chosen)

    def scores(self, pool: SelectionPool) -> np.ndarray | None:
        """The per-sample score this selector ranks by (higher first), or None when it does not score."""
        return None

    @abstractmethod
    def select(self, pool: SelectionPool, budget: int, rng: np.random.Generator) -> np.ndarray:
        """Return `budget` distinct indices into the pool."""


SELECTORS: Registry[type[CoresetSelector]] = Registry("core-set selector")


def make_selector(name: str, options: dict[str, Any] | None = None, key: str = "options") -> CoresetSelector:
    """Build a registered selector, validating its options (an unknown option is an error naming `key`)."""
    return SELECTORS.build(name, options, key)


def budget_count(fraction: float, pool_size: int) -> int:
    """The number of samples a budget fraction means for a pool (at least 1)."""
    if not 0 < fraction <= 1:
        raise PipelineError(f"budget fraction must be in (0, 1], got {fraction}")
    return max(1, min(pool_size, round(fraction * pool_size)))


def class_quotas(labels: np.ndarray, budget: int) -> dict[int, int]:
    """Split `budget` as evenly as possible over the classes, never above a class's size.

    Classes too small for an even share give their surplus to the others (water-filling). Leftover single
    samples go to the classes with the most spare capacity, ties broken by class id.
    """
    classes, sizes = np.unique(labels, return_counts=True)
    if budget > sizes.sum():
        raise PipelineError(f"budget {budget} exceeds the pool size {sizes.sum()}")
    quotas = np.zeros(len(classes), dtype=np.int64)
    remaining = budget
    while remaining > 0:
        open_classes = np.flatnonzero(quotas < sizes)
        share = remaining // len(open_classes)
        if share == 0:
            spare = sizes[open_classes] - quotas[open_classes]
            order = open_classes[np.lexsort((classes[open_classes], -spare))]
            quotas[order[:remaining]] += 1
            break
        grant = np.minimum(share, sizes[open_classes] - quotas[open_classes])
        quotas[open_classes] += grant
        remaining -= int(grant.sum())
    return {int(label): int(quota) for label, quota in zip(classes, quotas, strict=True)}


def top_by_score(scores: np.ndarray, budget: int) -> np.ndarray:
    """Indices of the `budget` highest scores (ties → lower index first)."""
    order = np.lexsort((np.arange(len(scores)), -scores))
    return order[:budget]


def select_by_score(scores: np.ndarray, labels: np.ndarray, budget: int, balance: bool) -> np.ndarray:
    """Top scores overall, or inside each class with the quotas of :func:`class_quotas` when `balance`."""
    return per_class(
        labels, budget, balance, lambda members, quota: members[top_by_score(scores[members], quota)]
    )


def per_class(
    labels: np.ndarray, budget: int, balance: bool, pick: Callable[[np.ndarray, int], np.ndarray]
) -> np.ndarray:
    """Run `pick(member_indices, quota) -> indices` per class (balance) or once on the whole pool."""
    if not balance:
        return pick(np.arange(len(labels)), budget)
    chosen = []
    for label, quota in class_quotas(labels, budget).items():
        if quota:
            chosen.append(pick(np.flatnonzero(labels == label), quota))
    return np.concatenate(chosen)
