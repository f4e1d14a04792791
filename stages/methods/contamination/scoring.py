"""Multiple-choice scoring as the official evaluation does it (src/evaluation/eval_utils.py): the prompt

    You are asked to answer a multiple-choice science problem.
    ### Question: {question}
    ### Choices: {label}: {text}\\n ... (one line per choice)
    Answer:

is followed by each label alone ("A", "B", ...), tokenised separately without special tokens; a label's score is
the mean log-probability of its tokens; the prediction is the first label with the highest score.

`score_items` batches this: prompts are left-padded together (attention mask and position ids make each row
compute what it would alone); when every label is one token a single forward pass per prompt scores all labels.
`score_items_loop` is the plain one-sequence-per-label loop of the official code, for checking and timing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from stages.methods.contamination.items import MCItem

OFFICIAL_PROMPT = """You are asked to answer a multiple-choice science problem.
### Question: {question}
### Choices: {choices}
Answer:"""


def format_choices(item: MCItem) -> str:
    """`A: text` lines, each ending in a newline (as the official loop builds them)."""
    return "".join(f"{label}: {text}\n" for label, text in zip(item.labels, item.choices, strict=True))


def mc_prompt(item: MCItem, template: str = OFFICIAL_PROMPT) -> str:
    return template.format(question=item.question, choices=format_choices(item))


@dataclass(frozen=True)
class Scores:
    """Per item: the predicted label, whether it is the key (the correctness vector) and each label's mean
    log-probability."""

    predicted: list[str]
    correct: np.ndarray
    label_logprobs: list[list[float]]


def _predict(items: Sequence[MCItem], logprobs: list[list[float]]) -> Scores:
    predicted = []
    for item, scores in zip(items, logprobs, strict=True):
        best, best_score = None, float("-inf")
        for label, score in zip(item.labels, scores, strict=True):
            if score > best_score:  # strict: the first of equal scores wins, as in the official loop
                best, best_score = label, score
        predicted.append(best)
    correct = np.array([p == item.answer for p, item in zip(predicted, items, strict=True)], dtype=np.int8)
    return Scores(predicted, correct, logprobs)


def _forward_logprobs(model: Any, sequences: list[list[int]], pad_id: int) -> Any:
    """log-softmax of the logits of a left-padded batch: (rows, width, vocab)."""
    import torch

    from stages.models.lm.batch import Batch

    batch = Batch.left_padded(sequences, pad_id)
    with torch.no_grad():
        logits = model(batch.input_ids, **batch.forward_args()).logits
    return torch.log_softmax(logits.float(), dim=-1)


def score_items(
    model: Any,
    encode: Callable[[str], list[int]],
    items: Sequence[MCItem],
    batch_size: int = 64,
    template: str = OFFICIAL_PROMPT,
    pad_id: int = 0,
) -> Scores:
    """Label log-probabilities of every item, batched (same numbers as `score_items_loop` up to float error)."""
    label_ids = {label: encode(label) for item in items for label in item.labels}
    if any(not ids for ids in label_ids.values()):
        raise ValueError("a label encodes to no tokens")
    single = all(len(ids) == 1 for ids in label_ids.values())
    prompts = [encode(mc_prompt(item, template)) for item in items]
    logprobs: list[list[float]] = []
    if single:
        for start in range(0, len(items), batch_size):
            chunk = prompts[start : start + batch_size]
            last = _forward_logprobs(model, chunk, pad_id)[:, -1, :]
            for row, item in enumerate(items[start : start + batch_size]):
                logprobs.append([float(last[row, label_ids[label][0]]) for label in item.labels])
        return _predict(items, logprobs)
    sequences, owners = [], []
    for index, (item, prompt) in enumerate(zip(items, prompts, strict=True)):
        for label in item.labels:
            sequences.append((prompt + label_ids[label], len(label_ids[label])))
            owners.append(index)
    flat: list[float] = []
    for start in range(0, len(sequences), batch_size):
        chunk = sequences[start : start + batch_size]
        table = _forward_logprobs(model, [ids for ids, _ in chunk], pad_id)
        width = table.shape[1]
        for row, (ids, length) in enumerate(chunk):
            positions = range(width - length - 1, width - 1)
            targets = ids[-length:]
            flat.append(
                sum(float(table[row, p, t]) for p, t in zip(positions, targets, strict=True)) / length
            )
    logprobs = [[] for _ in items]
    for owner, value in zip(owners, flat, strict=True):
        logprobs[owner].append(value)
    return _predict(items, logprobs)


def score_items_loop(
    model: Any, encode: Callable[[str], list[int]], items: Sequence[MCItem], template: str = OFFICIAL_PROMPT
) -> Scores:
    """The official loop: one forward pass per (item, label) on the prompt ids followed by the label ids."""
    import torch

    logprobs = []
    for item in items:
        question_ids = encode(mc_prompt(item, template))
        scores = []
        for label in item.labels:
            choice_ids = encode(label)
            input_ids = torch.tensor([question_ids + choice_ids])
            with torch.no_grad():
                logits = model(input_ids).logits[:, :-1, :]
            table = torch.log_softmax(logits.float(), dim=-1)
            chosen = table.gather(2, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)
            chosen = chosen[:, len(question_ids) - 1 : len(question_ids) + len(choice_ids) - 1]
            scores.append(float(chosen.sum()) / len(choice_ids))
        logprobs.append(scores)
    return _predict(items, logprobs)
