"""Analytic FLOPs of one answered item (the paper's Eq. 1–2, with F the Hoffmann et al. forward count of
`stages.models.lm.flops`): every decoded token is counted as a full pass over the context, as the paper does.

- Eq. 1, natural language: M passes of A on its prompt P_A to write an M-token message, then T passes of B on
  P_B + M tokens (its prompt with the message) to decode T answer tokens.
- Eq. 2, activation communication: one pass of A on P_A up to layer k, T passes of B on P_B, plus F(D), the
  cost of f on d-dimensional vectors (0 for replace, d for sum, 2d for mean, + 2·d_A·d_B for a map W).
"""

from __future__ import annotations

from stages.models.lm.flops import LMShape, forward_flops


def combination_flops(combination: str, width: int, mapped_from: int | None = None) -> float:
    """F(D): the graft's own cost on `width`-dimensional vectors (and W a when `mapped_from` = d_A)."""
    own = {"replace": 0.0, "sum": float(width), "mean": 2.0 * width}[combination]
    return own + (2.0 * width * mapped_from if mapped_from else 0.0)


def natural_language_flops(a: LMShape, b: LMShape, p_a: int, p_b: int, m: int, t: int) -> float:
    """Eq. 1: M · F_A(P_A) + T · F_B(P_B + M)."""
    return m * forward_flops(a, p_a) + t * forward_flops(b, p_b + m)


def activation_flops(
    a: LMShape, b: LMShape, p_a: int, p_b: int, t: int, k: int, combination: str, mapped: bool = False
) -> float:
    """Eq. 2: F_A(P_A, to layer k) + T · F_B(P_B) + F(D)."""
    width = min(a.hidden, b.hidden)
    to_k = forward_flops(a, p_a, layers=k, logits=False)
    return (
        to_k + t * forward_flops(b, p_b) + combination_flops(combination, width, a.hidden if mapped else None)
    )


def single_flops(b: LMShape, p: int, t: int) -> float:
    """B alone (silent, skyline): T passes on its P-token prompt."""
    return t * forward_flops(b, p)
