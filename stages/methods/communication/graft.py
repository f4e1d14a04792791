"""Activation communication: A runs on x_A to layer k; B runs on x_B to layer j, where its last prompt-token
vector b becomes f(a, b) (a = A's last-token vector, or Wa with a learned map); B then finishes the pass and
decodes. One graft, on B's prefill pass only; A's pass stops at layer k."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from stages.methods.communication.combine import COMBINATIONS, combine
from stages.models.lm.decoding import (
    Generation,
    continuation_logprob,
    continuation_logprobs_shared,
    generate,
    generate_batch,
    generate_scored_batch,
    generate_scored_shared,
    generate_shared,
)
from stages.models.lm.hooks import edit_rows, residuals


@dataclass(frozen=True)
class Graft:
    """Where and how B's activation is replaced: A's layer k, B's layer j, f, an optional map W (d_B × d_A),
    and `all_tokens` (the ablation: every aligned position, counted from the end, not only the last)."""

    k: int
    j: int
    combination: str = "replace"
    weight: Any = None
    all_tokens: bool = False

    def __post_init__(self) -> None:
        if self.combination not in COMBINATIONS:
            raise ValueError(f"combination {self.combination!r}; known: {', '.join(COMBINATIONS)}")


def sender_states(lm_a: Any, ids_a: list[int], graft: Graft) -> Any:
    """A's residual stream after layer k (n_A, d_A), mapped by W when the graft has one."""
    states = residuals(lm_a, ids_a, graft.k)
    return states if graft.weight is None else states @ graft.weight.T.to(states.dtype)


def graft_edit(states: Any, position: int, graft: Graft, length: int) -> Callable[[Any], Any]:
    """The edit of one row's stream (n, d): its vector at `position` (B's last prompt token) becomes f(a, b);
    with `all_tokens`, the last min(n_A, `length`) positions up to it each combine with A's aligned vector
    (`length`: B's prompt tokens, so left padding is never grafted)."""

    def last_token(stream: Any) -> Any:
        stream = stream.clone()
        stream[position] = combine(graft.combination, states[-1], stream[position])
        return stream

    def aligned(stream: Any) -> Any:
        end = position % stream.shape[0] + 1
        width = min(states.shape[0], length)
        stream = stream.clone()
        stream[end - width : end] = combine(graft.combination, states[-width:], stream[end - width : end])
        return stream

    return aligned if graft.all_tokens else last_token


def graft_context(lm_b: Any, states: Any, length: int, graft: Graft, row: int = 0) -> Callable:
    """The prefill context for B on one unpadded prompt of `length` tokens: its last token's vector becomes
    f(a, b), or every aligned position with `all_tokens`."""
    edit = graft_edit(states, length - 1, graft, length)
    return lambda: edit_rows(lm_b, graft.j, {row: edit})


def graft_generate(
    lm_a: Any,
    lm_b: Any,
    ids_a: list[int],
    ids_b: list[int],
    graft: Graft,
    max_new_tokens: int,
    top_p: float | None = None,
    seed: int = 0,
    states: Any = None,
) -> Generation:
    """B's answer to `ids_b` after the graft (`states`: A's layer-k stream if already computed)."""
    states = sender_states(lm_a, ids_a, graft) if states is None else states
    context = graft_context(lm_b, states, len(ids_b), graft)
    return generate(lm_b, ids_b, max_new_tokens, top_p=top_p, seed=seed, prefill=context)


def graft_logprob(
    lm_a: Any,
    lm_b: Any,
    ids_a: list[int],
    ids_b: list[int],
    answer_ids: list[int],
    graft: Graft,
    states: Any = None,
) -> float:
    """log p_B(answer | x_B, graft): the graft at B's last prompt token, the answer scored in the same pass."""
    states = sender_states(lm_a, ids_a, graft) if states is None else states
    return continuation_logprob(lm_b, ids_b, answer_ids, graft_context(lm_b, states, len(ids_b), graft))


Plan = tuple[Graft, Any] | None  # a graft and A's (mapped) layer-k stream, or None: B left alone


def plans_context(lm_b: Any, plans: list[Plan], position: int, lengths: list[int]) -> Callable:
    """One prefill context grafting plan r into batch row r (one hook per grafted layer serves all rows)."""
    by_layer: dict[int, dict[int, Callable]] = {}
    for row, plan in enumerate(plans):
        if plan is not None:
            graft, states = plan
            by_layer.setdefault(graft.j, {})[row] = graft_edit(states, position, graft, lengths[row])

    def enter() -> ExitStack:
        stack = ExitStack()
        for layer, edits in by_layer.items():
            stack.enter_context(edit_rows(lm_b, layer, edits))
        return stack

    return enter


def graft_rows(
    lm_b: Any,
    ids_b: list[int],
    plans: list[Plan],
    max_new_tokens: int,
    top_p: float | None = None,
    seed: int = 0,
) -> list[Generation]:
    """B's answers to `ids_b` under several grafts at once (one batch row each; None: no graft)."""
    return graft_batch(lm_b, [ids_b] * len(plans), plans, max_new_tokens, top_p, seed)


def graft_batch(
    lm_b: Any,
    prompts: list[list[int]],
    plans: list[Plan],
    max_new_tokens: int,
    top_p: float | None = None,
    seed: int = 0,
) -> list[Generation]:
    """B's answer to prompts[r] under plans[r], every row in one left-padded batch (any graft, `all_tokens`
    included: each row's whole prompt goes through the grafted pass)."""
    context = plans_context(lm_b, plans, -1, [len(ids) for ids in prompts])
    return generate_batch(lm_b, prompts, max_new_tokens, top_p, seed, context)


def graft_shared(
    lm_b: Any,
    prompts: list[list[int]],
    row_prompt: list[int],
    plans: list[Plan],
    max_new_tokens: int,
    top_p: float | None = None,
    seed: int = 0,
) -> list[Generation]:
    """B's answer to prompts[row_prompt[r]] under plans[r]; the rows of a prompt share its pass up to the last
    token, where the graft acts (last-token grafts only: `all_tokens` needs `graft_batch`)."""
    _check_last_token(plans)
    lengths = [len(prompts[index]) for index in row_prompt]
    context = plans_context(lm_b, plans, -1, lengths)
    return generate_shared(lm_b, prompts, row_prompt, max_new_tokens, top_p, seed, context)


def graft_batch_scored(
    lm_b: Any,
    prompts: list[list[int]],
    golds: list[list[int]],
    plans: list[Plan],
    max_new_tokens: int,
    top_p: float | None = None,
    seed: int = 0,
) -> tuple[list[Generation], list[float]]:
    """`graft_batch` and log p_B(golds[r] | prompts[r], plans[r]) from the same grafted prefill."""
    context = plans_context(lm_b, plans, -1, [len(ids) for ids in prompts])
    return generate_scored_batch(lm_b, prompts, golds, max_new_tokens, top_p, seed, context)


def graft_shared_scored(
    lm_b: Any,
    prompts: list[list[int]],
    row_prompt: list[int],
    golds: list[list[int]],
    plans: list[Plan],
    max_new_tokens: int,
    top_p: float | None = None,
    seed: int = 0,
) -> tuple[list[Generation], list[float]]:
    """`graft_shared` and log p_B(golds[i] | prompts[i], plans[r]) per row r (i = row_prompt[r]) from the same
    grafted pass over the last prompt token."""
    _check_last_token(plans)
    lengths = [len(prompts[index]) for index in row_prompt]
    context = plans_context(lm_b, plans, -1, lengths)
    return generate_scored_shared(lm_b, prompts, row_prompt, golds, max_new_tokens, top_p, seed, context)


def graft_logprobs_shared(
    lm_b: Any,
    prompts: list[list[int]],
    row_prompt: list[int],
    answers: list[list[int]],
    plans: list[Plan],
) -> list[float]:
    """log p_B(answers[i] | prompts[i], plans[r]) for each row r (i = row_prompt[r]), sharing prefixes."""
    _check_last_token(plans)
    lengths = [len(prompts[index]) for index in row_prompt]
    context = plans_context(lm_b, plans, 0, lengths)
    return continuation_logprobs_shared(lm_b, prompts, row_prompt, answers, context)


def _check_last_token(plans: list[Plan]) -> None:
    if any(plan is not None and plan[0].all_tokens for plan in plans):
        raise ValueError("all_tokens grafts edit the whole prompt: use graft_batch, not a shared prefix")
