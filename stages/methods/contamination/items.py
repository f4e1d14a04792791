"""Multiple-choice items: a question, labelled choices and the answer label; checks that the key is valid;
conversion to and from tables (one row per item, choices as a list column)."""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

LETTERS = tuple(string.ascii_uppercase)


@dataclass(frozen=True)
class MCItem:
    """One multiple-choice question. `group` pools distractors (e.g. an attribute); `altered_*` is a new
    question on the same entity with its own answer (the semantic-altering strategies read it)."""

    id: str
    question: str
    choices: tuple[str, ...]
    labels: tuple[str, ...]
    answer: str
    group: str = ""
    altered: tuple[tuple[str, tuple[str, ...], str], ...] = field(default=(), compare=False)

    @property
    def answer_text(self) -> str:
        """The text of the correct choice."""
        return self.choices[self.labels.index(self.answer)]

    def with_choices(self, choices: Sequence[str], answer_text: str, relabel: bool = True) -> MCItem:
        """The item with new choice texts (labels A, B, ... when `relabel`) and the answer set to the label
        of `answer_text`."""
        choices = tuple(choices)
        labels = LETTERS[: len(choices)] if relabel else self.labels
        return replace(self, choices=choices, labels=tuple(labels), answer=labels[choices.index(answer_text)])


class ItemError(ValueError):
    """An item whose answer key is not valid."""


def check_item(item: MCItem) -> MCItem:
    """The answer label is one of the labels, labels are unique, choice texts are unique and non-empty."""
    where = f"item {item.id!r}"
    if len(item.choices) < 2:
        raise ItemError(f"{where}: needs at least 2 choices, got {len(item.choices)}")
    if len(item.labels) != len(item.choices):
        raise ItemError(f"{where}: {len(item.labels)} labels for {len(item.choices)} choices")
    if len(set(item.labels)) != len(item.labels):
        raise ItemError(f"{where}: repeated labels {list(item.labels)}")
    if item.answer not in item.labels:
        raise ItemError(f"{where}: answer {item.answer!r} is not one of the labels {list(item.labels)}")
    if any(not text.strip() for text in item.choices):
        raise ItemError(f"{where}: an empty choice")
    if len(set(item.choices)) != len(item.choices):
        raise ItemError(f"{where}: repeated choice texts, so the answer is not unique")
    if not item.question.strip():
        raise ItemError(f"{where}: empty question")
    return item


def to_rows(items: Sequence[MCItem], version: str = "") -> list[dict]:
    """Table rows (choices and labels as lists; the altered questions are not stored)."""
    return [
        {
            "version": version,
            "id": item.id,
            "question": item.question,
            "choices": list(item.choices),
            "labels": list(item.labels),
            "answer": item.answer,
            "group": item.group,
        }
        for item in items
    ]


def from_rows(rows: Sequence[dict]) -> list[MCItem]:
    """Items from table rows written by `to_rows` (each checked)."""
    return [
        check_item(
            MCItem(
                id=str(row["id"]),
                question=str(row["question"]),
                choices=tuple(row["choices"]),
                labels=tuple(row["labels"]),
                answer=str(row["answer"]),
                group=str(row.get("group") or ""),
            )
        )
        for row in rows
    ]
