"""Prompts of unequal length as one left-padded batch: the attention mask and position ids that make each row
compute what it would alone, carried through cached decoding steps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Batch:
    """Prompts of unequal length left-padded into one tensor: each prompt's last token sits in the last
    column, pads are masked out and positions count real tokens only."""

    input_ids: Any
    attention_mask: Any  # None when no row is padded (the unpadded kernels, bit-identical to one row)
    position_ids: Any

    @classmethod
    def left_padded(cls, prompts: list[list[int]], pad_id: int = 0) -> Batch:
        import torch

        if not prompts or any(len(ids) == 0 for ids in prompts):
            raise ValueError("every prompt needs at least one token")
        width = max(len(ids) for ids in prompts)
        input_ids = torch.tensor([[pad_id] * (width - len(ids)) + list(ids) for ids in prompts])
        if all(len(ids) == width for ids in prompts):
            return cls(input_ids, None, None)
        mask = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids in prompts])
        return cls(input_ids, mask, (mask.cumsum(-1) - 1).clamp(min=0))

    def step(self, tokens: list[int]) -> tuple[Any, Batch]:
        """The next token of every row as a (rows, 1) tensor and the batch state that feeds it after the cache."""
        return self.extend([[token] for token in tokens])

    def extend(self, suffixes: list[list[int]]) -> tuple[Any, Batch]:
        """Equal-length suffixes (rows, m) to feed after the cache, and the batch state for that pass."""
        import torch

        new = torch.tensor(suffixes)
        if self.attention_mask is None:
            return new, self
        mask = torch.cat([self.attention_mask, torch.ones_like(new)], dim=-1)
        last = self.position_ids[:, -1:]
        return new, Batch(new, mask, last + torch.arange(1, new.shape[1] + 1))

    def select(self, rows: Any) -> Batch:
        """The batch with rows taken (and repeated) by index, as a cache expanded with `reorder_cache`."""
        if self.attention_mask is None:
            return Batch(self.input_ids[rows], None, None)
        return Batch(self.input_ids[rows], self.attention_mask[rows], self.position_ids[rows])

    def forward_args(self) -> dict[str, Any]:
        """The mask and positions to pass with this state's tokens (none when no row is padded)."""
        if self.attention_mask is None:
            return {}
        return {"attention_mask": self.attention_mask, "position_ids": self.position_ids}
