"""The parameter-free functional forms f(a, b) and the paper's rule for unequal widths (its footnote 1)."""

from __future__ import annotations

from typing import Any

COMBINATIONS = ("sum", "mean", "replace")


def combine(name: str, a: Any, b: Any) -> Any:
    """f(a, b) for f = sum (a + b), mean ((a + b) / 2) or replace (a).

    When the widths differ, only the last min(d_A, d_B) coordinates are combined; B's other coordinates stay.
    """
    if name not in COMBINATIONS:
        raise ValueError(f"unknown combination {name!r}; known: {', '.join(COMBINATIONS)}")
    width = min(a.shape[-1], b.shape[-1])
    tail_a, tail_b = a[..., -width:].to(b.dtype), b[..., -width:]
    if name == "sum":
        tail = tail_a + tail_b
    elif name == "mean":
        tail = (tail_a + tail_b) / 2
    else:
        tail = tail_a
    out = b.clone()
    out[..., -width:] = tail
    return out
