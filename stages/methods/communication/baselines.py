"""The paper's baselines: B alone (silent), one model seeing x_A and x_B (skyline), and natural-language
communication (A writes a message from x_A, B reads it with x_B)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stages.models.lm.decoding import Generation, generate_batch, generate_scored_batch

MESSAGE_REQUEST = "Summarize the text above for a partner who has not read it. Keep every name."


@dataclass(frozen=True)
class Exchange:
    """B's answer, for natural language A's message, and (when asked) log p_B(gold answer | B's prompt)."""

    answer: Generation
    message: Generation | None = None
    logprob: float | None = None


def silent(lm_b: Any, x_b: str, max_new_tokens: int, top_p: float | None = None, seed: int = 0) -> Exchange:
    return silent_batch(lm_b, [x_b], max_new_tokens, top_p, seed)[0]


def skyline(
    lm_b: Any, x_a: str, x_b: str, max_new_tokens: int, top_p: float | None = None, seed: int = 0
) -> Exchange:
    return skyline_batch(lm_b, [x_a], [x_b], max_new_tokens, top_p, seed)[0]


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
    batch = natural_language_batch(
        lm_a, lm_b, [x_a], [x_b], max_new_tokens, max_message_tokens, top_p, seed, request
    )
    return batch[0]


def silent_batch(
    lm_b: Any, xs_b: list[str], max_new_tokens: int, top_p: float | None = None, seed: int = 0
) -> list[Exchange]:
    """B alone on each x_B (one left-padded batch)."""
    answers = generate_batch(lm_b, [lm_b.chat_ids(x_b) for x_b in xs_b], max_new_tokens, top_p, seed)
    return [Exchange(answer) for answer in answers]


def skyline_batch(
    lm_b: Any,
    xs_a: list[str],
    xs_b: list[str],
    max_new_tokens: int,
    top_p: float | None = None,
    seed: int = 0,
    golds: list[list[int]] | None = None,
) -> list[Exchange]:
    """B on each x_A and x_B together (one left-padded batch); with `golds`, each gold answer scored too."""
    prompts = [skyline_prompt(lm_b, x_a, x_b) for x_a, x_b in zip(xs_a, xs_b, strict=True)]
    answers, scores = _answer(lm_b, prompts, max_new_tokens, top_p, seed, golds)
    return [Exchange(answer, None, score) for answer, score in zip(answers, scores, strict=True)]


def natural_language_batch(
    lm_a: Any,
    lm_b: Any,
    xs_a: list[str],
    xs_b: list[str],
    max_new_tokens: int,
    max_message_tokens: int,
    top_p: float | None = None,
    seed: int = 0,
    request: str = MESSAGE_REQUEST,
    golds: list[list[int]] | None = None,
) -> list[Exchange]:
    """`natural_language` for every pair (x_A, x_B): A's messages in one batch, then B's answers in one (with
    `golds`, each gold answer scored after B's prompt with the message)."""
    asks = [lm_a.chat_ids(f"{x_a}\n\n{request}") for x_a in xs_a]
    messages = generate_batch(lm_a, asks, max_message_tokens, top_p, seed)
    prompts = [message_prompt(lm_b, message.text, x_b) for message, x_b in zip(messages, xs_b, strict=True)]
    answers, scores = _answer(lm_b, prompts, max_new_tokens, top_p, seed, golds)
    return [
        Exchange(answer, message, score)
        for answer, message, score in zip(answers, messages, scores, strict=True)
    ]


def _answer(lm_b, prompts, max_new_tokens, top_p, seed, golds) -> tuple[list[Generation], list[float | None]]:
    """B's answers to `prompts` and, with `golds`, log p_B(gold | prompt) from the same prefill."""
    if golds is None:
        return generate_batch(lm_b, prompts, max_new_tokens, top_p, seed), [None] * len(prompts)
    answers, scores = generate_scored_batch(lm_b, prompts, golds, max_new_tokens, top_p, seed)
    return answers, list(scores)


def skyline_prompt(lm_b: Any, x_a: str, x_b: str) -> list[int]:
    """B's prompt when it sees x_A and x_B together."""
    return lm_b.chat_ids(f"{x_a}\n{x_b}")


def message_prompt(lm_b: Any, message: str, x_b: str) -> list[int]:
    """B's prompt with A's natural-language message before x_B."""
    return lm_b.chat_ids(f"Your partner says: {message.strip()}\n{x_b}")
