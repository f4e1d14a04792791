"""Greedy and nucleus decoding with a KV cache, an optional context for the prefill pass only (where the
residual hooks of `stages.models.lm.hooks` go), and the token counts FLOPs are computed from."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from stages.models.lm.batch import Batch

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
    return generate_batch(lm, [ids], max_new_tokens, top_p, seed, prefill)[0]


def _check_decoding(max_new_tokens: int, top_p: float | None) -> None:
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens={max_new_tokens}: expected ≥ 1")
    if top_p is not None and not 0 < top_p <= 1:
        raise ValueError(f"top_p={top_p}: expected 0 < p ≤ 1")


def generate_batch(
    lm: Any,
    prompts: list[list[int]],
    max_new_tokens: int,
    top_p: float | None = None,
    seed: int = 0,
    prefill: Prefill | None = None,
) -> list[Generation]:
    """Decode every prompt in one left-padded batch (row r: prompts[r]); one forward pass per step serves all.

    Every prompt's last token is in the last column, so a prefill hook at position −1 edits each row's last
    prompt token. Each row stops at its own end-of-turn id; its `passes` count the passes it needed alone.
    """
    import torch

    _check_decoding(max_new_tokens, top_p)
    batch = Batch.left_padded(prompts)
    with torch.no_grad(), prefill() if prefill is not None else nullcontext():
        output = lm.model(batch.input_ids, use_cache=True, logits_to_keep=1, **batch.forward_args())
    return _decode(lm, prompts, output, batch, max_new_tokens, top_p, seed)


def generate_scored_batch(
    lm: Any,
    prompts: list[list[int]],
    continuations: list[list[int]],
    max_new_tokens: int,
    top_p: float | None = None,
    seed: int = 0,
    prefill: Prefill | None = None,
) -> tuple[list[Generation], list[float]]:
    """`generate_batch` and, from the same prefill, log p(continuations[r] | prompts[r]) per row (the scoring
    pass reads a copy of the prefill's cache, after `prefill()` is left)."""
    import torch

    _check_decoding(max_new_tokens, top_p)
    batch = Batch.left_padded(prompts)
    with torch.no_grad(), prefill() if prefill is not None else nullcontext():
        output = lm.model(batch.input_ids, use_cache=True, logits_to_keep=1, **batch.forward_args())
    scores = score_after(lm, output, batch, continuations)
    return _decode(lm, prompts, output, batch, max_new_tokens, top_p, seed), scores


def score_after(lm: Any, output: Any, batch: Batch, continuations: list[list[int]]) -> list[float]:
    """log p(continuation) per row after a prefill pass `output` (its last logits and cache, which is copied,
    not changed); rows shorter than the longest continuation are padded after their real tokens (inert)."""
    import copy

    import torch

    if len(continuations) != output.logits.shape[0] or any(len(c) == 0 for c in continuations):
        raise ValueError("one non-empty continuation per batch row")
    first = torch.log_softmax(output.logits[:, -1].double(), dim=-1)
    scores = [float(first[row, cont[0]]) for row, cont in enumerate(continuations)]
    width = max(len(cont) for cont in continuations)
    if width == 1:
        return scores
    new, state = batch.extend([cont[:-1] + [0] * (width - len(cont)) for cont in continuations])
    with torch.no_grad():
        logits = lm.model(
            new, cache=copy.deepcopy(output.cache), use_cache=True, **state.forward_args()
        ).logits
    logprobs = torch.log_softmax(logits.double(), dim=-1)
    for row, cont in enumerate(continuations):
        scores[row] += sum(float(logprobs[row, i, token]) for i, token in enumerate(cont[1:]))
    return scores


def generate_scored_shared(
    lm: Any,
    prompts: list[list[int]],
    row_prompt: list[int],
    continuations: list[list[int]],
    max_new_tokens: int,
    top_p: float | None = None,
    seed: int = 0,
    prefill: Prefill | None = None,
) -> tuple[list[Generation], list[float]]:
    """`generate_shared` and, from the same pass, log p(continuations[i] | prompts[i]) per row r
    (i = row_prompt[r])."""
    import torch

    _check_decoding(max_new_tokens, top_p)
    cache, batch = prefix_cache(lm, prompts, row_prompt)
    new, batch = batch.step([prompts[index][-1] for index in row_prompt])
    with torch.no_grad(), prefill() if prefill is not None else nullcontext():
        output = lm.model(new, cache=cache, use_cache=True, logits_to_keep=1, **batch.forward_args())
    scores = score_after(lm, output, batch, [continuations[index] for index in row_prompt])
    expanded = [prompts[index] for index in row_prompt]
    return _decode(lm, expanded, output, batch, max_new_tokens, top_p, seed), scores


def generate_shared(
    lm: Any,
    prompts: list[list[int]],
    row_prompt: list[int],
    max_new_tokens: int,
    top_p: float | None = None,
    seed: int = 0,
    prefill: Prefill | None = None,
) -> list[Generation]:
    """Decode one row per entry of `row_prompt` (row r continues prompts[row_prompt[r]]); the rows of a prompt
    share one pass over all but its last token, and `prefill()` wraps the pass over the last tokens alone.

    The same result as `generate_batch` on the expanded prompts (up to float rounding) for any edit of the
    last prompt token (a hook at position −1 of that one-token pass), for a fraction of the compute.
    """
    import torch

    _check_decoding(max_new_tokens, top_p)
    cache, batch = prefix_cache(lm, prompts, row_prompt)
    new, batch = batch.step([prompts[index][-1] for index in row_prompt])
    with torch.no_grad(), prefill() if prefill is not None else nullcontext():
        output = lm.model(new, cache=cache, use_cache=True, logits_to_keep=1, **batch.forward_args())
    expanded = [prompts[index] for index in row_prompt]
    return _decode(lm, expanded, output, batch, max_new_tokens, top_p, seed)


def prefix_cache(lm: Any, prompts: list[list[int]], row_prompt: list[int]) -> tuple[Any, Batch]:
    """The KV cache of every prompt but its last token (one batch row per prompt), expanded to one row per
    entry of `row_prompt`, and the matching batch state."""
    import torch

    if any(len(ids) < 2 for ids in prompts):
        raise ValueError("a shared prefix needs prompts of at least two tokens")
    if not row_prompt or not all(0 <= index < len(prompts) for index in row_prompt):
        raise ValueError(f"row_prompt must index the {len(prompts)} prompts")
    batch = Batch.left_padded([ids[:-1] for ids in prompts])
    with torch.no_grad():
        cache = lm.model(batch.input_ids, use_cache=True, logits_to_keep=1, **batch.forward_args()).cache
    rows = torch.tensor(row_prompt)
    cache.reorder_cache(rows)
    return cache, batch.select(rows)


def _decode(
    lm: Any,
    prompts: list[list[int]],
    output: Any,
    batch: Batch,
    max_new_tokens: int,
    top_p: float | None,
    seed: int,
) -> list[Generation]:
    """Greedy or nucleus decoding of every row from the prefill's `output` until each row's end-of-turn id."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    rows = len(prompts)
    out_ids: list[list[int]] = [[] for _ in range(rows)]
    passes, done = [1] * rows, [False] * rows
    with torch.no_grad():
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
            new, batch = batch.step(tokens)
            output = lm.model(new, cache=output.cache, use_cache=True, **batch.forward_args())
    return [
        Generation(row_ids, lm.tokenizer.decode(row_ids), len(ids), row_passes)
        for ids, row_ids, row_passes in zip(prompts, out_ids, passes, strict=True)
    ]


def continuation_logprobs_shared(
    lm: Any,
    prompts: list[list[int]],
    row_prompt: list[int],
    continuations: list[list[int]],
    prefill: Prefill | None = None,
) -> list[float]:
    """log p(continuation | prompt) per row (row r: prompts[row_prompt[r]] and continuations[row_prompt[r]]),
    the rows of a prompt sharing its prefix pass; `prefill()` wraps the pass over [last prompt token,
    continuation] (position 0 of that pass is the last prompt token)."""
    import torch

    cache, batch = prefix_cache(lm, prompts, row_prompt)
    suffixes = [[prompts[index][-1], *continuations[index]] for index in row_prompt]
    width = max(len(suffix) for suffix in suffixes)
    padded = [suffix + [0] * (width - len(suffix)) for suffix in suffixes]  # after every real token: inert
    new, batch = batch.extend(padded)
    with torch.no_grad(), prefill() if prefill is not None else nullcontext():
        logits = lm.model(new, cache=cache, use_cache=False, **batch.forward_args()).logits
    logprobs = torch.log_softmax(logits.double(), dim=-1)
    return [
        float(sum(logprobs[row, i, token] for i, token in enumerate(suffix[1:])))
        for row, suffix in enumerate(suffixes)
    ]


def prefill_logits(lm: Any, ids: list[int], prefill: Prefill | None = None) -> Any:
    """Logits (n, V) of one pass over `ids`, with `prefill()` entered around it."""
    import torch

    with torch.no_grad(), prefill() if prefill is not None else nullcontext():
        return lm.model(torch.tensor([ids]), use_cache=False).logits[0]


def continuation_logprob(
    lm: Any, prompt: list[int], continuation: list[int], prefill: Prefill | None = None
) -> float:
    """log p(continuation | prompt), summed over its tokens, in one pass (hooks in `prefill` apply to it)."""
    import torch

    logits = prefill_logits(lm, [*prompt, *continuation], prefill)
    logprobs = torch.log_softmax(logits.double(), dim=-1)
    start = len(prompt)
    return float(sum(logprobs[start - 1 + i, token] for i, token in enumerate(continuation)))
