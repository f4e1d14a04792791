"""The one timing helper: median wall-clock seconds of repeats, several functions interleaved in random order.

Benchmarks and timing claims use it so that every speed number is measured the same way on this shared,
noisy machine: fixed threads (the caller's), warm-up excluded, repeats interleaved so that a burst of load
hits every contender alike, the median reported.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np


def median_seconds(function: Callable[[], Any], repeats: int = 3) -> tuple[float, Any]:
    """Median seconds of `repeats` calls and the last call's result."""
    if repeats < 1:
        raise ValueError("repeats must be ≥ 1")
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def interleaved_seconds(
    functions: Mapping[str, Callable[[], Any]], repeats: int = 3, seed: int = 0, warmup: bool = True
) -> dict[str, list[float]]:
    """Every repeat's seconds per function; each round calls all functions once, in a seeded random order."""
    if repeats < 1:
        raise ValueError("repeats must be ≥ 1")
    if warmup:
        for function in functions.values():
            function()
    rng = np.random.default_rng(seed)
    names = list(functions)
    seconds: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(repeats):
        for index in rng.permutation(len(names)):
            started = time.perf_counter()
            functions[names[index]]()
            seconds[names[index]].append(time.perf_counter() - started)
    return seconds
