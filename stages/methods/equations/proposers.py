"""Proposers of equation skeletons for the LLM-SR-style loop and the data-blind baseline.

A skeleton is an expression string over the problem's inputs and constants `p0 … p9` (at most ten), as the
LLM-SR program skeletons with `params[i]`. The default :class:`GrammarProposer` is deterministic for a seed:
without examples it draws sums of terms from a small grammar; with in-context examples it mutates and
recombines their terms (add, drop or replace a term, swap a variable, cross two examples). An LLM proposer
would implement the same `propose` method; none ships in this package (see the paper README).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

MAX_PARAMS = 10

UNARY = (
    "{v}",
    "{v}**2",
    "{v}**3",
    "sqrt({v})",
    "1/{v}",
    "exp(-@*{v})",
    "sin(@*{v})",
    "cos(@*{v})",
    "log({v})",
    "{v}/(1 + @*{v})",
)
"""Term shapes in one variable `{v}` (`@` is a fresh constant)."""
PREFIX = "cst"
"""Constants of a skeleton are `cst0 … cst9` (a problem may not use these names as symbols)."""


@dataclass(frozen=True)
class Context:
    """What a proposer sees of a problem: its variable names and descriptions (never the data)."""

    inputs: tuple[str, ...]
    descriptions: tuple[str, ...] = ()


class Proposer(Protocol):
    """Proposes `count` skeleton strings, given up to a few in-context skeletons (best first)."""

    def propose(
        self, context: Context, examples: Sequence[str], count: int, rng: np.random.Generator
    ) -> list[str]: ...


def split_terms(skeleton: str) -> list[str]:
    """The top-level `+` terms of a skeleton written as `t1 + t2 + ...` (as this module writes them)."""
    depth, start, terms = 0, 0, []
    for index, char in enumerate(skeleton):
        depth += char == "("
        depth -= char == ")"
        if depth == 0 and skeleton[index : index + 3] == " + ":
            terms.append(skeleton[start:index])
            start = index + 3
    terms.append(skeleton[start:])
    return [term.strip() for term in terms if term.strip()]


_CONSTANT = re.compile(rf"@|\b{PREFIX}\d+\b")


def _number_constants(term: str, first: int) -> str:
    numbers = iter(range(first, first + len(_CONSTANT.findall(term))))
    return _CONSTANT.sub(lambda _: f"{PREFIX}{next(numbers)}", term)


def renumber(terms: Sequence[str]) -> str:
    """Join terms and renumber their constants (`@` or `cst<i>`) as cst0, cst1, ... (at most ten: later
    terms are dropped)."""
    out, count = [], 0
    for term in terms:
        used = len(_CONSTANT.findall(term))
        if count + used > MAX_PARAMS:
            break
        out.append(_number_constants(term, count))
        count += used
    return " + ".join(out) if out else f"{PREFIX}0"


def shape(index: int, variable: str) -> str:
    """Term shape `index` of :data:`UNARY` in `variable`."""
    return UNARY[index].replace("{v}", variable)


class GrammarProposer:
    """A deterministic stand-in for an LLM: draws and edits sums of `P * shape(var)` terms."""

    def __init__(self, max_terms: int = 4, interaction: float = 0.3) -> None:
        self.max_terms = max_terms
        self.interaction = interaction

    def term(self, context: Context, rng: np.random.Generator) -> str:
        variable = context.inputs[rng.integers(len(context.inputs))]
        first = shape(int(rng.integers(len(UNARY))), variable)
        if len(context.inputs) > 1 and rng.random() < self.interaction:
            other = context.inputs[rng.integers(len(context.inputs))]
            return f"@*{first}*{shape(int(rng.integers(4)), other)}"
        return f"@*{first}"

    def fresh(self, context: Context, rng: np.random.Generator) -> str:
        count = int(rng.integers(1, self.max_terms + 1))
        return renumber([self.term(context, rng) for _ in range(count)] + ["@"])

    def mutate(self, context: Context, examples: Sequence[str], rng: np.random.Generator) -> str:
        terms = split_terms(examples[0])
        move = rng.integers(5)
        if move == 0 and len(terms) < self.max_terms + 1:
            terms.append(self.term(context, rng))
        elif move == 1 and len(terms) > 1:
            terms.pop(int(rng.integers(len(terms))))
        elif move == 2:
            terms[int(rng.integers(len(terms)))] = self.term(context, rng)
        elif move == 3 and len(examples) > 1:
            other = split_terms(examples[1])
            terms.append(other[int(rng.integers(len(other)))])
        else:
            index = int(rng.integers(len(terms)))
            variable = context.inputs[rng.integers(len(context.inputs))]
            terms[index] = f"({terms[index]})*{shape(int(rng.integers(4)), variable)}"
        return renumber(terms)

    def propose(
        self, context: Context, examples: Sequence[str], count: int, rng: np.random.Generator
    ) -> list[str]:
        """`count` skeletons: fresh draws without examples, edits of the examples otherwise."""
        if not examples:
            return [self.fresh(context, rng) for _ in range(count)]
        return [self.mutate(context, list(examples), rng) for _ in range(count)]
