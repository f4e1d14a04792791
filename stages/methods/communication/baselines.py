"""The paper's baselines: B alone (silent), one model seeing x_A and x_B (skyline), and natural-language
communication (A writes a message from x_A, B reads it with x_B)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stages.models.lm.decoding import Generation, generate

MESSAGE_REQUEST = "Tell your partner, in one short sentence, the key fact above."


@dataclass(frozen=True)
class Exchange:
    """B's answer and, for natural language, A's message."""

    answer: Generation
    message: Generation | None = None


def silent(lm_b: Any, x_b: str, max_new_tokens: int, top_p: float | None = None, seed: int = 0) -> Exchange:
    return Exchange(generate(lm_b, lm_b.chat_ids(x_b), max_new_tokens, top_p, seed))


def skyline(
    lm_b: Any, x_a: str, x_b: str, max_new_tokens: int, top_p: float | None = None, seed: int = 0
) -> Exchange:
    return Exchange(generate(lm_b, lm_b.chat_ids(f"{x_a}\n{x_b}"), max_new_tokens, top_p, seed))


def natural_language(
    lm_a: Any,
    lm_b: Any,
    x_a: str,
    x_b: str,
    max_new_tokens: int,
    max_message_tokens: int,
    top_p: float | None = None,
    seed: int = 0,
    request: str = MESSAGE_REQUEST,
) -> Exchange:
    """A decodes a message (≤ `max_message_tokens`) from x_A; B answers x_B with the message before it."""
    message = generate(lm_a, lm_a.chat_ids(f"{x_a}\n{request}"), max_message_tokens, top_p, seed)
    prompt = f"Your partner says: {message.text.strip()}\n{x_b}"
    return Exchange(generate(lm_b, lm_b.chat_ids(prompt), max_new_tokens, top_p, seed), message)
