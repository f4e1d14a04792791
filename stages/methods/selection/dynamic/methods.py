"""The per-epoch selection methods. Each turns the sample statistics into an :class:`EpochPlan`.

Register a new one with ``@SELECTION_METHODS.register("name")``; build one with :func:`make_selection_method`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from stages.core.errors import PipelineError
from stages.core.params import StrictModel
from stages.core.registry import Registry
from stages.methods.selection.dynamic.plan import EpochPlan, kept_count
from stages.methods.selection.dynamic.stats import SampleStats


class NoOptions(StrictModel):
    """A method without options."""


class SelectionMethod(ABC):
    """Base class of per-epoch selection methods."""

    name: ClassVar[str] = ""
    Options: ClassVar[type[StrictModel]] = NoOptions
    uses_ratio: ClassVar[bool] = True
    uses_semantic: ClassVar[bool] = False
    """Whether the plan reads `SampleStats.semantic` (so the consistency precompute is part of its cost)."""
    routes_augmentation: ClassVar[bool] = False
    """Whether the plan marks its own samples for augmentation (`EpochPlan.augment`)."""

    def __init__(self, options: StrictModel | None = None) -> None:
        self.options = options if options is not None else self.Options()

    def full_data_epoch(self, epoch: int, epochs: int | None) -> bool:
        """Whether `epoch` trains on every sample unweighted (an annealing schedule's last epochs); not by default."""
        return False

    @abstractmethod
    def plan(self, epoch: int, ratio: float, stats: SampleStats, rng: np.random.Generator) -> EpochPlan:
        """The samples to train on in `epoch`, from what the stats say so far."""


SELECTION_METHODS: Registry[type[SelectionMethod]] = Registry("dynamic selection method")


@SELECTION_METHODS.register("full")
class FullData(SelectionMethod):
    """Every sample, every epoch (the reference the others are timed against)."""

    name = "full"
    uses_ratio = False

    def plan(self, epoch: int, ratio: float, stats: SampleStats, rng: np.random.Generator) -> EpochPlan:
        return EpochPlan.plain(np.arange(len(stats)))


@SELECTION_METHODS.register("random")
class RandomSubset(SelectionMethod):
    """A fresh uniform random subset of `ratio` × n samples each epoch."""

    name = "random"

    def plan(self, epoch: int, ratio: float, stats: SampleStats, rng: np.random.Generator) -> EpochPlan:
        return EpochPlan.plain(rng.choice(len(stats), size=kept_count(ratio, len(stats)), replace=False))


class LossPruningOptions(StrictModel):
    """InfoBatch-style pruning limits and annealing."""

    max_prune_probability: float = Field(
        0.9, gt=0, lt=1, description="cap on the share of well-learned samples pruned when enough exist"
    )
    anneal: float = Field(
        0.125,
        ge=0,
        lt=1,
        description="InfoBatch's δ: the last δ of the epochs train on all samples, unpruned and unweighted",
    )


@SELECTION_METHODS.register("loss_pruning")
class LossPruning(SelectionMethod):
    """InfoBatch-style: prune randomly among well-learned samples (last loss below the mean) and up-weight the
    kept well-learned ones by 1/(1 − p) so the expected gradient is unchanged.

    To train on exactly `ratio` × n samples, `p` = pruned / candidates; when fewer than pruned /
    `max_prune_probability` samples are below the mean, the candidates extend to that many lowest-loss samples.
    Samples never trained on count as high-loss (always kept), as InfoBatch's initial scores do. Annealing as
    in InfoBatch: pruning stops once `epoch` ≥ (1 − `anneal`) × epochs (12 epochs, δ = 0.125: the last one).
    """

    name = "loss_pruning"
    Options = LossPruningOptions

    def full_data_epoch(self, epoch: int, epochs: int | None) -> bool:
        if self.options.anneal == 0:
            return False
        if epochs is None:
            raise PipelineError(
                "loss_pruning anneals over the last epochs: give DynamicSampler(..., epochs=...) or set "
                "options.anneal to 0"
            )
        return epoch >= (1 - self.options.anneal) * epochs

    def plan(self, epoch: int, ratio: float, stats: SampleStats, rng: np.random.Generator) -> EpochPlan:
        n_samples = len(stats)
        n_prune = n_samples - kept_count(ratio, n_samples)
        if n_prune == 0:
            return EpochPlan.plain(np.arange(n_samples))
        if not stats.seen.any():
            return EpochPlan.plain(rng.choice(n_samples, size=n_samples - n_prune, replace=False))
        loss = np.where(stats.seen, stats.loss, np.inf)
        below_mean = int((loss < loss[stats.seen].mean()).sum())
        needed = int(np.ceil(n_prune / self.options.max_prune_probability))
        n_candidates = min(n_samples, max(below_mean, needed))
        candidates = np.argsort(loss, kind="stable")[:n_candidates]
        pruned = rng.choice(candidates, size=n_prune, replace=False)
        keep = np.ones(n_samples, dtype=bool)
        keep[pruned] = False
        weights = np.ones(n_samples, dtype=np.float32)
        weights[candidates] = 1.0 / (1.0 - n_prune / n_candidates)
        indices = np.flatnonzero(keep)
        return EpochPlan(indices, np.zeros(len(indices), bool), weights[indices], np.empty(0, np.int64))


def make_selection_method(
    name: str, options: dict[str, Any] | None = None, key: str = "options"
) -> SelectionMethod:
    """Build a registered method, validating its options (an unknown option is an error naming `key`)."""
    return SELECTION_METHODS.build(name, options, key)
