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
    continuation_logprobs,
    generate,
    generate_rows,
)
from stages.models.lm.hooks import edit_residual, replace_residual, residuals


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


def graft_context(lm_b: Any, states: Any, position: int, graft: Graft, row: int = 0) -> Callable:
    """The prefill context for B: its vector at `position` (the last prompt token) becomes f(a, b); with
    `all_tokens`, the last min(n_A, position + 1) positions up to it each combine with A's aligned vector."""
    if not graft.all_tokens:
        return lambda: replace_residual(
            lm_b, graft.j, position, lambda b: combine(graft.combination, states[-1], b), row
        )

    def edit(stream: Any) -> Any:
        width = min(states.shape[0], position + 1)
        stream = stream.clone()
        rows = slice(position + 1 - width, position + 1)
        stream[rows] = combine(graft.combination, states[-width:], stream[rows])
        return stream

    return lambda: edit_residual(lm_b, graft.j, edit, row)


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
    context = graft_context(lm_b, states, len(ids_b) - 1, graft)
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
    return continuation_logprob(lm_b, ids_b, answer_ids, graft_context(lm_b, states, len(ids_b) - 1, graft))


Plan = tuple[Graft, Any] | None  # a graft and A's (mapped) layer-k stream, or None: B left alone


def plans_context(lm_b: Any, plans: list[Plan], position: int) -> Callable:
    """One prefill context grafting plan r into batch row r."""

    def enter() -> ExitStack:
        stack = ExitStack()
        for row, plan in enumerate(plans):
            if plan is not None:
                stack.enter_context(graft_context(lm_b, plan[1], position, plan[0], row)())
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
    context = plans_context(lm_b, plans, len(ids_b) - 1)
    return generate_rows(lm_b, ids_b, len(plans), max_new_tokens, top_p, seed, context)


def graft_logprob_rows(lm_b: Any, ids_b: list[int], answer_ids: list[int], plans: list[Plan]) -> list[float]:
    """log p_B(answer | x_B) under several grafts at once (one batch row each)."""
    context = plans_context(lm_b, plans, len(ids_b) - 1)
    return continuation_logprobs(lm_b, ids_b, answer_ids, len(plans), context)
