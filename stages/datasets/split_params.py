"""Params shared by sources that have no fixed test split of their own."""

from __future__ import annotations

from pydantic import Field

from stages.core.params import StrictModel


class SplitSourceParams(StrictModel):
    """The stratified test share and the seed of the split."""

    test_fraction: float = Field(0.2, gt=0, lt=1)
    split_seed: int = Field(0, ge=0)
