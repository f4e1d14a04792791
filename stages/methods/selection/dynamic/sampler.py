"""`DynamicSampler`: a torch `Sampler` that re-plans every epoch (select, augment, suppress, weight).

Use it with a `DataLoader` (wrap the dataset in :class:`IndexedDataset` so batches carry their indices), or
iterate :meth:`DynamicSampler.batches` in an in-memory loop. After each forward pass, hand the per-sample
losses (and embeddings) back with :meth:`DynamicSampler.record`; they drive the next epoch's plan.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset, Sampler

from stages.core.errors import PipelineError
from stages.core.seeding import derive_seed
from stages.methods.selection.dynamic.methods import SelectionMethod
from stages.methods.selection.dynamic.plan import EpochPlan
from stages.methods.selection.dynamic.stats import SampleStats


def check_ratio(ratio: float, key: str = "ratio") -> float:
    """A kept ratio must lie in (0, 1]."""
    if not 0 < ratio <= 1:
        raise PipelineError(f"{key} {ratio}: the share of samples kept per epoch must be in (0, 1]")
    return ratio


class DynamicSampler(Sampler[int]):
    """Yields the shuffled indices a selection method keeps this epoch; call `set_epoch` before each epoch."""

    def __init__(
        self, method: SelectionMethod, stats: SampleStats, ratio: float, seed: int, epochs: int | None = None
    ) -> None:
        self.method, self.stats, self.seed, self.epochs = method, stats, seed, epochs
        self.ratio = check_ratio(ratio)
        self.epoch = -1
        self.plan: EpochPlan | None = None
        self.scoring_seconds = 0.0
        self._augment = np.zeros(len(stats), dtype=bool)
        self._weights = np.ones(len(stats), dtype=np.float32)

    def set_epoch(self, epoch: int) -> EpochPlan:
        """Score the samples and fix this epoch's plan (timed in `scoring_seconds`); an annealed epoch (the
        method's schedule over `epochs`) trains on every sample."""
        started = time.perf_counter()
        rng = np.random.default_rng(derive_seed(self.seed, "dynamic-selection", epoch))
        if self.method.full_data_epoch(epoch, self.epochs):
            plan = EpochPlan.plain(np.arange(len(self.stats)))
        else:
            plan = self.method.plan(epoch, self.ratio, self.stats, rng)
        self._check(plan)
        self._augment[:] = False
        self._weights[:] = 1.0
        self._augment[plan.indices] = plan.augment
        self._weights[plan.indices] = plan.weights
        self.stats.times_selected[plan.indices] += 1
        self.epoch, self.plan = epoch, plan
        self.scoring_seconds = time.perf_counter() - started
        return plan

    def order(self) -> np.ndarray:
        """This epoch's kept indices in a shuffled order fixed by the seed and epoch."""
        plan = self._current_plan()
        rng = np.random.default_rng(derive_seed(self.seed, "dynamic-order", self.epoch))
        return plan.indices[rng.permutation(len(plan.indices))]

    def __iter__(self) -> Iterator[int]:
        return iter(self.order().tolist())

    def __len__(self) -> int:
        return len(self._current_plan().indices)

    def batches(self, batch_size: int) -> Iterator[torch.Tensor]:
        """This epoch's indices in shuffled mini-batches, as int64 tensors (for in-memory training)."""
        order = torch.from_numpy(self.order())
        yield from order.split(batch_size)

    def augment_mask(self, indices: torch.Tensor | np.ndarray) -> torch.Tensor:
        """Which of `indices` this epoch's plan routes to augmentation."""
        return torch.from_numpy(self._augment[np.asarray(indices)])

    def loss_weights(self, indices: torch.Tensor | np.ndarray) -> torch.Tensor:
        """The loss weight of each of `indices` (1 unless the method rescales, e.g. InfoBatch)."""
        return torch.from_numpy(self._weights[np.asarray(indices)])

    def record(self, indices: Any, losses: Any, embeddings: Any = None) -> None:
        """Hand back one training batch's per-sample results (tensors, on any device, or arrays).

        Args:
            indices: the b dataset indices of the batch (the last item `IndexedDataset` yields).
            losses: b per-sample losses (`reduction="none"`), finite; detached or not.
            embeddings: optional b × e features of the batch (density-based methods need them); e fixed.

        Returns None; the values drive the next `set_epoch`. Raises `PipelineError` naming both lengths when
        the batch's indices, losses and embeddings disagree, or when an index is out of range.
        """
        self.stats.record(_numpy(indices), _numpy(losses), None if embeddings is None else _numpy(embeddings))

    def _current_plan(self) -> EpochPlan:
        if self.plan is None:
            raise PipelineError("DynamicSampler: call set_epoch(epoch) before iterating")
        return self.plan

    def _check(self, plan: EpochPlan) -> None:
        indices = plan.indices
        if len(indices) and (indices.min() < 0 or indices.max() >= len(self.stats)):
            raise AssertionError(f"{self.method.name} planned an index outside 0..{len(self.stats) - 1}")
        if len(np.unique(indices)) != len(indices):
            raise AssertionError(f"{self.method.name} planned a sample twice")


def _numpy(value: Any) -> np.ndarray:
    return value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)


class IndexedDataset(Dataset):
    """Wraps a map-style dataset so each item also returns its index: `(*item, index)`."""

    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset

    def __len__(self) -> int:
        return len(self.dataset)  # type: ignore[arg-type]

    def __getitem__(self, index: int) -> tuple:
        item = self.dataset[index]
        return (*(item if isinstance(item, tuple) else (item,)), index)
