"""Param field types that several papers' sections share, validated the same way everywhere."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

from stages.datasets.sources import SOURCES


def _known_dataset(name: str) -> str:
    if name not in SOURCES:
        raise ValueError(f"unknown dataset; valid names: {', '.join(SOURCES.names())}")
    return name


def _distinct_seeds(seeds: list[int]) -> list[int]:
    if not seeds or len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise ValueError("seeds must be a non-empty list of distinct non-negative integers")
    return seeds


DatasetName = Annotated[str, AfterValidator(_known_dataset)]
"""A registered classification source (`stages/datasets/sources.py`)."""

Seeds = Annotated[list[int], AfterValidator(_distinct_seeds)]
"""Run seeds: distinct, non-negative."""
