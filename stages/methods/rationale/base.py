"""The one interface a rationalizer's modality implements, and the straight-through hard Gumbel mask.

A modality (text: tokens; graphs: edges) turns a set of rows into `Batch`es whose selectable units carry a
0/1 `mask` (1 = a real unit); a *selector* (generator or attacker) maps a batch to two logits per unit, a
*predictor* maps a batch and a 0/1 selection `z` of the same shape as `mask` to class logits.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from stages.methods.rationale.config import RationaleConfig


@dataclass
class Batch:
    """Rows of one modality ready for the nets: `inputs` is what the modality's nets read."""

    inputs: Any
    mask: torch.Tensor  # 0/1 float, one entry per selectable unit (text: [B, L]; graphs: [E])
    labels: torch.Tensor  # [B] long, 0/1
    gold: torch.Tensor | None = None  # 0/1 float like `mask`, or None without annotations
    rows: torch.Tensor | None = None  # [B] row indices of the batch in its dataset

    @property
    def size(self) -> int:
        """Number of rows (texts or graphs)."""
        return int(self.labels.shape[0])


def hard_gumbel_mask(logits: torch.Tensor, mask: torch.Tensor, tau: float) -> torch.Tensor:
    """0/1 selection per unit: a hard Gumbel-softmax sample, straight-through (forward exactly 0/1, backward the
    soft sample's gradient); padding is never selected. Sampled at evaluation too, as in the official code (the
    caller seeds torch so that evaluation is repeatable)."""
    return F.gumbel_softmax(logits, tau=tau, hard=True, dim=-1)[..., 1] * mask


class Encoder(ABC):
    """A modality: how rows become batches and which nets select and predict (`gru` text, `gcn` graphs)."""

    name: ClassVar[str]
    ordered: ClassVar[bool]  # units have an order (a continuity term applies)

    @abstractmethod
    def batch(self, data: Any, rows: Sequence[int]) -> Batch:
        """The rows `rows` of `data` as one batch."""

    @abstractmethod
    def size(self, data: Any) -> int:
        """Number of rows in `data`."""

    @abstractmethod
    def selector(self, data: Any, config: RationaleConfig) -> nn.Module:
        """A new generator/attacker net: `net(batch) -> logits [..., 2]` shaped like `batch.mask`."""

    @abstractmethod
    def predictor(self, data: Any, config: RationaleConfig) -> nn.Module:
        """A new predictor net: `net(batch, z) -> class logits [B, 2]`, reading only the selected units."""

    def continuity(self, z: torch.Tensor, batch: Batch) -> torch.Tensor:
        """Mean absolute change between neighbouring units (0 for unordered units)."""
        if not self.ordered:
            return z.new_zeros(())
        return (z[:, 1:] - z[:, :-1]).abs().mean()
