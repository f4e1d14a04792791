"""Param field types that several papers' sections share, validated the same way everywhere."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from stages.core.errors import PipelineError
from stages.core.params import StrictModel
from stages.core.registry import Registry
from stages.datasets.registry import names_of


def _known_dataset(name: str) -> str:
    valid = names_of("classification")
    if name not in valid:
        raise ValueError(f"unknown dataset; classification sources: {', '.join(valid)}")
    return name


def _distinct_seeds(seeds: list[int]) -> list[int]:
    if not seeds or len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise ValueError("seeds must be a non-empty list of distinct non-negative integers")
    return seeds


DatasetName = Annotated[str, AfterValidator(_known_dataset)]
"""A registered classification source (`stages/datasets/sources/`)."""

Seeds = Annotated[list[int], AfterValidator(_distinct_seeds)]
"""Run seeds: distinct, non-negative."""


class PoolParams(StrictModel):
    """The classification dataset a paper draws its pool and test split from, and its run seeds.

    Every paper with a pool/test prepare step (`stages.datasets.pool`) inherits these four fields.
    """

    dataset: DatasetName = "fashion_mnist"
    pool_size: int | None = Field(20000, ge=10, description="pool drawn (stratified) from the train split")
    test_size: int | None = Field(None, ge=10, description="test rows used (None: the whole test split)")
    seeds: Seeds = Field(default_factory=lambda: [0, 1, 2])


def check_choices(choices: Mapping[str, Any], registry: Registry, name_field: str, section: str) -> None:
    """Build each configured entry (`{label: {<name_field>: name, options: {...}}}`) through its registry,
    so an unknown name or option fails at validation, naming `section.label`."""
    for label, entry in choices.items():
        try:
            registry.build(getattr(entry, name_field), entry.options, key=f"{section}.{label}.options")
        except PipelineError as error:
            raise ValueError(f"{section.rpartition('.')[2]}.{label}: {error}") from None
