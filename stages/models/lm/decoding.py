"""Greedy and nucleus decoding with a KV cache, an optional context for the prefill pass only (where the
residual hooks of `stages.models.lm.hooks` go), and the token counts FLOPs are computed from."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

Prefill = Callable[[], AbstractContextManager]


@dataclass(frozen=True)
class Generation:
    """What one decode produced: the new token ids and text, and how many tokens the prompt had."""

    ids: list[int]
    text: str
    prompt_tokens: int
    passes: int  # forward passes made: the prefill plus one per fed-back token

    @property
    def new_tokens(self) -> int:
        return len(self.ids)


def next_token(logits: Any, top_p: float | None, generator: Any) -> int:
    """argmax (greedy) or a draw from the smallest set of tokens whose probability reaches `top_p`."""
    import torch

    if top_p is None:
        return int(torch.argmax(logits))
    probs = torch.softmax(logits.double(), dim=-1)
    sorted_probs, order = torch.sort(probs, descending=True)
    keep = torch.cumsum(sorted_probs, dim=-1) - sorted_probs < top_p  # include the token crossing p
    kept = sorted_probs * keep
    choice = torch.multinomial(kept / kept.sum(), 1, generator=generator)
    return int(order[choice])


def generate(
    lm: Any,
    ids: list[int],
    max_new_tokens: int,
    top_p: float | None = None,
    seed: int = 0,
    prefill: Prefill | None = None,
) -> Generation:
    """Decode up to `max_new_tokens` after `ids` (stopping at an end-of-turn id, which is not kept).

    `prefill()` returns a context manager entered around the prompt's pass only; cached decoding steps run
    outside it. `top_p` None is greedy; otherwise nucleus sampling seeded by `seed`.
    """
    return generate_rows(lm, ids, 1, max_new_tokens, top_p, seed, prefill)[0]


def generate_rows(
    lm: Any,
    ids: list[int],
    rows: int,
    max_new_tokens: int,
    top_p: float | None = None,
    seed: int = 0,
    prefill: Prefill | None = None,
) -> list[Generation]:
    """`rows` decodes of the same prompt in one batch, e.g. each with its own residual edit (hooks with
    `row=`): one forward pass per step serves them all. Each row stops at its own end-of-turn id; its `passes`
    count the passes it needed alone."""
    import torch

    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens={max_new_tokens}: expected ≥ 1")
    if top_p is not None and not 0 < top_p <= 1:
        raise ValueError(f"top_p={top_p}: expected 0 < p ≤ 1")
    generator = torch.Generator().manual_seed(seed)
    out_ids: list[list[int]] = [[] for _ in range(rows)]
    passes, done = [1] * rows, [False] * rows
    with torch.no_grad():
        with prefill() if prefill is not None else nullcontext():
            output = lm.model(torch.tensor([ids] * rows), use_cache=True, logits_to_keep=1)
        for step in range(max_new_tokens):
            tokens = [next_token(output.logits[row, -1], top_p, generator) for row in range(rows)]
            for row, token in enumerate(tokens):
                if done[row]:
                    continue
                if token in lm.tokenizer.eos_ids:
                    done[row] = True
                    continue
                out_ids[row].append(token)
                passes[row] += step + 1 < max_new_tokens
            if all(done) or step + 1 == max_new_tokens:
                break
            output = lm.model(torch.tensor([[t] for t in tokens]), cache=output.cache, use_cache=True)
    return [
        Generation(row_ids, lm.tokenizer.decode(row_ids), len(ids), row_passes)
        for row_ids, row_passes in zip(out_ids, passes, strict=True)
    ]


def prefill_logits(lm: Any, ids: list[int], prefill: Prefill | None = None) -> Any:
    """Logits (n, V) of one pass over `ids`, with `prefill()` entered around it."""
    import torch

    with torch.no_grad(), prefill() if prefill is not None else nullcontext():
        return lm.model(torch.tensor([ids]), use_cache=False).logits[0]


def continuation_logprobs(
    lm: Any, prompt: list[int], continuation: list[int], rows: int, prefill: Prefill | None = None
) -> list[float]:
    """log p(continuation | prompt) for `rows` copies of the sequence in one batched pass (each copy with its
    own hooks, `row=`)."""
    import torch

    sequence = [*prompt, *continuation]
    with torch.no_grad(), prefill() if prefill is not None else nullcontext():
        logits = lm.model(torch.tensor([sequence] * rows), use_cache=False).logits
    logprobs = torch.log_softmax(logits.double(), dim=-1)
    start = len(prompt)
    return [
        float(sum(logprobs[row, start - 1 + i, token] for i, token in enumerate(continuation)))
        for row in range(rows)
    ]


def continuation_logprob(
    lm: Any, prompt: list[int], continuation: list[int], prefill: Prefill | None = None
) -> float:
    """log p(continuation | prompt), summed over its tokens, in one pass (hooks in `prefill` apply to it)."""
    import torch

    logits = prefill_logits(lm, [*prompt, *continuation], prefill)
    logprobs = torch.log_softmax(logits.double(), dim=-1)
    start = len(prompt)
    return float(sum(logprobs[start - 1 + i, token] for i, token in enumerate(continuation)))
