"""Benchmark rewrite ("mitigation") strategies, each a function of an item and a seeded `random.Random`,
registered by name with its category. Every strategy returns a checked item: the answer label still points at
the correct text.

Written by rule in the official code, reproduced exactly here:

- `irrelevant_context`: question = "https://t.co/DlI9kw" + " " + question;
- `permute_choice`: the choice texts shuffled with Python's `random.shuffle`, the labels kept in place, the
  answer the label now in front of the correct text.

Rule-based analogues of the GPT-4o strategies (one per category of the paper):

- `typo` (1–2 typos in a short question, 3 in a long one: swapped, dropped, doubled or look-alike letters;
  names, numbers and short words untouched), `synonyms` (1–2 / 3 words replaced from the shipped lexicon),
  `relevant_context` (two scene-setting sentences about the question's subject, no answer information),
  `incorrect_choice` (two extra incorrect choices appended from the item's distractor pool, original choices
  and key unchanged), `mpa` (synonyms + relevant context on the question, one extra incorrect choice, choices
  permuted and relabelled: the official MPA order);
- semantic-altering `attribute_shift` and `reverse_lookup`: a new question on the same entity, its answer
  recomputed from the fact world (the item's `altered` entries, written by the benchmark generator).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from stages.core.registry import Registry
from stages.methods.contamination.items import MCItem, check_item
from stages.methods.contamination.lexicon import SYNONYMS

IRRELEVANT_PREFIX = "https://t.co/DlI9kw"
"""The official irrelevant-context string (src/mitigation/prompts.py: IRRELEVANT_CONTEXT_PROMPTS)."""
LONG_QUESTION_WORDS = 15
"""A question of more words than this is "long" (3 edits instead of 1–2: the official prompts' minimal
modification)."""
LOOK_ALIKE = {"o": "0", "l": "1", "i": "1", "e": "3", "a": "4", "s": "5", "t": "7", "b": "6", "g": "9"}
WORD = re.compile(r"[A-Za-z]+")

Pools = Mapping[str, Sequence[str]]
"""Distractor pool per item group: every choice text seen in that group (a benchmark's own vocabulary)."""


@dataclass(frozen=True)
class Strategy:
    """A registered rewrite: name, category (semantic-preserving single / combined, or semantic-altering),
    whether the official code writes it by rule (`exact`), and the function."""

    name: str
    category: str
    exact: bool
    rewrite: Callable[[MCItem, random.Random, Pools], MCItem]
    description: str


STRATEGIES: Registry[Strategy] = Registry("rewrite strategy")


def register(name: str, category: str, description: str, exact: bool = False):
    def decorate(function: Callable[[MCItem, random.Random, Pools], MCItem]):
        STRATEGIES.add(name, Strategy(name, category, exact, function, description))
        return function

    return decorate


def edit_count(text: str, rng: random.Random) -> int:
    """How many edits the official prompts' "minimal modification" asks for: 1–2 in a short sentence, 3 in a
    long one."""
    return 3 if len(text.split()) > LONG_QUESTION_WORDS else rng.choice((1, 2))


def editable_words(text: str) -> list[re.Match]:
    """Words a rewrite may touch: lower-case letters only (names start upper-case), at least 4 letters."""
    return [
        match
        for match in WORD.finditer(text)
        if len(match.group()) >= 4 and match.group().islower() and match.start() > 0
    ]


def typo_word(word: str, rng: random.Random) -> str:
    """One typo: swap two inner letters, drop one, double one, or a look-alike character."""
    kind = rng.randrange(4)
    position = rng.randrange(1, len(word) - 1)
    if kind == 0:
        return word[:position] + word[position + 1] + word[position] + word[position + 2 :]
    if kind == 1:
        return word[:position] + word[position + 1 :]
    if kind == 2:
        return word[:position] + word[position] + word[position:]
    candidates = [index for index, char in enumerate(word) if char in LOOK_ALIKE]
    if not candidates:
        return word[:position] + word[position + 1 :]
    index = rng.choice(candidates)
    return word[:index] + LOOK_ALIKE[word[index]] + word[index + 1 :]


def replace_words(text: str, matches: Sequence[re.Match], new: Sequence[str]) -> str:
    pieces, last = [], 0
    for match, word in sorted(zip(matches, new, strict=True), key=lambda pair: pair[0].start()):
        pieces += [text[last : match.start()], word]
        last = match.end()
    return "".join([*pieces, text[last:]])


def add_typos(text: str, rng: random.Random) -> str:
    """The question with `edit_count` typos in distinct editable words."""
    words = editable_words(text)
    if not words:
        return text
    chosen = rng.sample(words, min(edit_count(text, rng), len(words)))
    return replace_words(text, chosen, [typo_word(match.group(), rng) for match in chosen])


def swap_synonyms(text: str, rng: random.Random) -> str:
    """The question with `edit_count` words replaced by a lexicon synonym (case of the first letter kept)."""
    words = [match for match in WORD.finditer(text) if match.group().lower() in SYNONYMS]
    if not words:
        return text
    chosen = rng.sample(words, min(edit_count(text, rng), len(words)))
    new = []
    for match in chosen:
        synonym = rng.choice(SYNONYMS[match.group().lower()])
        new.append(synonym[0].upper() + synonym[1:] if match.group()[0].isupper() else synonym)
    return replace_words(text, chosen, new)


SCENES = (
    "People often talk about {subject}. A curious traveller once spent a long evening asking about {subject}.",
    "A teacher wrote {subject} on the board. The whole class leaned in to hear the next question.",
    "In a small library, a student opened a book about {subject}. The pages were old and full of notes.",
    "A quiz show host smiled and turned to the topic of {subject}. The audience went quiet.",
)


def subject_of(question: str) -> str:
    """The question's subject: its first capitalised word after the first (a name), else its longest word."""
    words = WORD.findall(question)
    names = [word for word in words[1:] if word[0].isupper()]
    if names:
        return names[0]
    return max(words, key=len) if words else "this question"


def relevant_scene(question: str, rng: random.Random) -> str:
    """Two sentences setting a scene about the question's subject (no information about the answer)."""
    return rng.choice(SCENES).format(subject=subject_of(question))


def extra_choices(item: MCItem, pools: Pools, count: int, rng: random.Random) -> list[str]:
    """`count` incorrect texts from the item's group pool that are not already choices."""
    pool = sorted(set(pools.get(item.group, ())) - set(item.choices))
    if len(pool) < count:
        raise ValueError(
            f"item {item.id!r}: the distractor pool of group {item.group!r} has {len(pool)} unused texts, "
            f"{count} needed"
        )
    return rng.sample(pool, count)


@register("irrelevant_context", "preserving-single", "prefix the official irrelevant string", exact=True)
def irrelevant_context(item: MCItem, rng: random.Random, pools: Pools) -> MCItem:
    return replace(item, question=f"{IRRELEVANT_PREFIX} {item.question}")


@register("permute_choice", "preserving-single", "shuffle the choice texts, labels kept", exact=True)
def permute_choice(item: MCItem, rng: random.Random, pools: Pools) -> MCItem:
    correct = item.answer_text
    texts = list(item.choices)
    rng.shuffle(texts)
    return replace(item, choices=tuple(texts), answer=item.labels[texts.index(correct)])


@register("typo", "preserving-single", "1–2 (short) or 3 (long) typos in the question")
def typo(item: MCItem, rng: random.Random, pools: Pools) -> MCItem:
    return replace(item, question=add_typos(item.question, rng))


@register("synonyms", "preserving-single", "1–2 (short) or 3 (long) words replaced from the lexicon")
def synonyms(item: MCItem, rng: random.Random, pools: Pools) -> MCItem:
    return replace(item, question=swap_synonyms(item.question, rng))


@register(
    "relevant_context", "preserving-single", "two scene sentences about the subject before the question"
)
def relevant_context(item: MCItem, rng: random.Random, pools: Pools) -> MCItem:
    return replace(item, question=f"{relevant_scene(item.question, rng)} {item.question}")


@register("incorrect_choice", "preserving-single", "two extra incorrect choices appended (key unchanged)")
def incorrect_choice(item: MCItem, rng: random.Random, pools: Pools) -> MCItem:
    texts = [*item.choices, *extra_choices(item, pools, 2, rng)]
    return item.with_choices(texts, item.answer_text, relabel=True)


@register(
    "mpa", "preserving-combined", "synonyms + relevant context, one extra choice, permuted and relabelled"
)
def mpa(item: MCItem, rng: random.Random, pools: Pools) -> MCItem:
    question = swap_synonyms(item.question, rng)
    question = f"{relevant_scene(question, rng)} {question}"
    texts = [*item.choices, *extra_choices(item, pools, 1, rng)]
    rng.shuffle(texts)
    return replace(item, question=question).with_choices(texts, item.answer_text, relabel=True)


def altered(item: MCItem, index: int, name: str) -> MCItem:
    if len(item.altered) <= index:
        raise ValueError(
            f"item {item.id!r}: strategy {name} needs a new question on the same entity (the benchmark "
            "generator writes it); this item has none"
        )
    question, choices, answer = item.altered[index]
    labels = tuple(chr(ord("A") + i) for i in range(len(choices)))
    return replace(item, question=question, choices=tuple(choices), labels=labels, answer=answer, altered=())


@register("attribute_shift", "altering", "another fact of the same entity, answer recomputed")
def attribute_shift(item: MCItem, rng: random.Random, pools: Pools) -> MCItem:
    return altered(item, 0, "attribute_shift")


@register("reverse_lookup", "altering", "the question turned around (which entity has this value)")
def reverse_lookup(item: MCItem, rng: random.Random, pools: Pools) -> MCItem:
    return altered(item, 1, "reverse_lookup")


def pools_of(items: Sequence[MCItem]) -> dict[str, list[str]]:
    """Every choice text per group, in first-seen order (the distractor pools)."""
    pools: dict[str, list[str]] = {}
    for item in items:
        bucket = pools.setdefault(item.group, [])
        bucket.extend(text for text in item.choices if text not in bucket)
    return pools


def apply_strategy(name: str, items: Sequence[MCItem], seed: int, pools: Pools | None = None) -> list[MCItem]:
    """Rewrite every item with strategy `name` (a `random.Random(seed)` drawn in item order, like the official
    loop); each result is checked (valid, unique answer)."""
    strategy = STRATEGIES.get(name)
    rng = random.Random(seed)
    pools = pools_of(items) if pools is None else pools
    return [check_item(strategy.rewrite(item, rng, pools)) for item in items]
