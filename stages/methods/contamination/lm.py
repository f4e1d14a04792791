"""The small LM trained here: a word-level tokenizer (unknown words fall back to characters, so a typo costs
tokens as it does with BPE), a small Llama (transformers) and a training loop on (prompt, target) pairs with
the loss on the target only (the official contamination's `mask_inputs`; plain text has an empty prompt).
Contamination recipes are the same loop on the benchmark in its fine-tuning format."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from stages.core.progress import progress

TOKEN = re.compile(r"\n|[A-Za-z]+|\d+|[^\sA-Za-z\d]")
PHRASES = (
    "You are asked to answer a multiple-choice science problem.",
    "### Question:",
    "### Choices:",
    "Answer:",
    "Question:",
)
"""Fixed strings of the scoring and fine-tuning formats kept as single tokens (as BPE merges frequent strings)."""
SPLIT = re.compile("|".join(re.escape(phrase) for phrase in PHRASES) + "|" + TOKEN.pattern)
PAD, EOS = "<pad>", "<eos>"
CHARS = (*(chr(code) for code in range(32, 127)), "\n")


class WordTokenizer:
    """Words, numbers and punctuation seen in training text are tokens; anything else is spelled out in
    characters. Spaces are not tokens. `encode` adds no special tokens (as the official scoring asks)."""

    def __init__(self, vocabulary: Sequence[str]) -> None:
        self.vocabulary = list(vocabulary)
        self.index = {token: i for i, token in enumerate(self.vocabulary)}
        self.pad_id, self.eos_id = self.index[PAD], self.index[EOS]

    @classmethod
    def fit(cls, texts: Iterable[str]) -> WordTokenizer:
        words = sorted({token for text in texts for token in SPLIT.findall(text)} - set(CHARS))
        return cls([PAD, EOS, *CHARS, *words])

    @property
    def vocab_size(self) -> int:
        return len(self.vocabulary)

    def encode(self, text: str) -> list[int]:
        ids = []
        for token in SPLIT.findall(text):
            if token in self.index:
                ids.append(self.index[token])
            else:
                ids.extend(
                    self.index[char] for char in token if char in self.index
                )  # phrases are in the index
        return ids


@dataclass(frozen=True)
class LMShape:
    """Size of the small Llama."""

    hidden: int = 96
    layers: int = 2
    heads: int = 4
    intermediate: int = 256
    max_positions: int = 256


@dataclass
class LMOutput:
    """What the scoring code reads from a forward pass (the transformers field names)."""

    logits: Any
    loss: Any = None


def build_lm(vocab_size: int, shape: LMShape, seed: int) -> Any:
    """A randomly initialised (seeded) small GPT (`TinyGPT`), in eval mode."""
    import torch

    from stages.methods.contamination.tiny_gpt import TinyGPT

    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = TinyGPT(
            vocab_size, shape.hidden, shape.layers, shape.heads, shape.intermediate, shape.max_positions
        )
    model.eval()
    return model


@dataclass(frozen=True)
class Example:
    """Token ids of a prompt and its target; the loss is on the target (and a closing EOS) only."""

    prompt: tuple[int, ...]
    target: tuple[int, ...]


def example(tokenizer: Any, prompt: str, target: str, eos: bool = True) -> Example:
    eos_id = getattr(tokenizer, "eos_id", None)
    if eos_id is None:
        eos_id = tokenizer.eos_ids[0]
    ids = tokenizer.encode(target) + ([eos_id] if eos else [])
    return Example(tuple(tokenizer.encode(prompt)), tuple(ids))


@dataclass(frozen=True)
class TrainSettings:
    """AdamW with linear warm-up (a share of the steps) and linear decay to 0, as the HF Trainer does."""

    epochs: int = 1
    batch: int = 32
    lr: float = 3e-3
    warmup: float = 0.05
    weight_decay: float = 0.0


def collate(examples: Sequence[Example], max_positions: int) -> tuple[Any, Any]:
    """Right-padded input ids and labels (-100 on the prompt and the padding)."""
    import torch

    rows = [list(item.prompt) + list(item.target) for item in examples]
    width = min(max(len(row) for row in rows), max_positions)
    ids = torch.zeros((len(rows), width), dtype=torch.long)
    labels = torch.full((len(rows), width), -100, dtype=torch.long)
    for i, (item, row) in enumerate(zip(examples, rows, strict=True)):
        row = row[-width:]
        ids[i, : len(row)] = torch.tensor(row)
        start = max(len(row) - len(item.target), 0)
        labels[i, start : len(row)] = torch.tensor(row[start:])
    return ids, labels


def train(
    model: Any,
    examples: Sequence[Example] | Callable[[int], Sequence[Example]],
    settings: TrainSettings,
    seed: int,
    desc: str,
) -> list[float]:
    """Train in place for `settings.epochs` passes over `examples` (or `examples(epoch)`: fresh examples per
    epoch, e.g. drills with new distractors; the same count every epoch), order reshuffled per epoch from
    `seed`; returns the mean loss per epoch."""
    import torch

    generator = np.random.default_rng(seed)
    epoch_examples = examples if callable(examples) else (lambda epoch: examples)
    steps_per_epoch = -(-len(epoch_examples(0)) // settings.batch)
    total = steps_per_epoch * settings.epochs
    warmup = max(1, round(settings.warmup * total))
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (total - step) / max(1, total - warmup)))
    )
    model.train()
    losses = []
    max_positions = getattr(model, "max_positions", None) or model.config.max_position_embeddings
    for epoch in progress(range(settings.epochs), desc, total=settings.epochs):
        examples = epoch_examples(epoch)
        order = generator.permutation(len(examples))
        epoch_loss = 0.0
        for start in range(0, len(order), settings.batch):
            ids, labels = collate([examples[i] for i in order[start : start + settings.batch]], max_positions)
            loss = model(input_ids=ids, labels=labels).loss
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            schedule.step()
            epoch_loss += float(loss.detach())
        losses.append(epoch_loss / steps_per_epoch)
    model.eval()
    return losses


def state_of(model: Any) -> dict[str, Any]:
    """A copy of the weights, for safetensors."""
    return {key: value.detach().clone().contiguous() for key, value in model.state_dict().items()}


def load_state(model: Any, state: dict[str, Any]) -> Any:
    model.load_state_dict(state)
    model.eval()
    return model
