"""The char-level pieces of (c)–(e): the offline corpus, a tiny causal transformer, batches and scoring.

Corpus: the source files of a few Python stdlib modules of the running interpreter (offline, no download);
characters outside printable ASCII become `?`. Vocabulary: the 97 printable ASCII characters (fixed, so every
run and the arithmetic SFT share it).
"""

from __future__ import annotations

import hashlib
import importlib.util
import string
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import Tensor, nn

from stages.methods.losses import FenchelYoungLoss, LossSpec, divergence, f_softargmax

VOCAB = "".join(sorted(set(string.printable) - {"\r", "\x0b", "\x0c"}))
INDEX = {char: position for position, char in enumerate(VOCAB)}
UNKNOWN = INDEX["?"]


def encode(text: str) -> np.ndarray:
    """Token ids of `text` (unknown characters → `?`)."""
    return np.fromiter((INDEX.get(char, UNKNOWN) for char in text), dtype=np.int64, count=len(text))


def decode(tokens) -> str:
    """Text of token ids."""
    return "".join(VOCAB[int(token)] for token in tokens)


def corpus_sources(modules: list[str]) -> list[Path]:
    """The source file of each stdlib module (a ValueError names a module without one)."""
    paths = []
    for name in modules:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            raise ValueError(f"lm.corpus_modules: {name!r} has no Python source file in this interpreter")
        paths.append(Path(spec.origin))
    return paths


def load_corpus(modules: list[str]) -> tuple[np.ndarray, dict[str, str]]:
    """Token ids of the concatenated sources and the md5 of each file (recorded with the results)."""
    texts, digests = [], {}
    for name, path in zip(modules, corpus_sources(modules), strict=True):
        raw = path.read_bytes()
        digests[name] = hashlib.md5(raw).hexdigest()
        texts.append(raw.decode("utf-8", errors="replace"))
    return encode("\n".join(texts)), digests


def split_corpus(tokens: np.ndarray, held_out_fraction: float) -> tuple[Tensor, Tensor]:
    """Train = the first part, held-out = the last `held_out_fraction` of the text."""
    cut = int(len(tokens) * (1 - held_out_fraction))
    return torch.from_numpy(tokens[:cut]), torch.from_numpy(tokens[cut:])


class CharTransformer(nn.Module):
    """Pre-norm causal transformer over characters with learned positions."""

    def __init__(self, d_model: int, layers: int, heads: int, context: int, vocab: int = len(VOCAB)) -> None:
        super().__init__()
        self.context = context
        self.embed = nn.Embedding(vocab, d_model)
        self.position = nn.Embedding(context, d_model)
        block = nn.TransformerEncoderLayer(
            d_model, heads, 4 * d_model, dropout=0.0, batch_first=True, norm_first=True
        )
        self.blocks = nn.TransformerEncoder(block, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, tokens: Tensor) -> Tensor:
        """Next-token scores (batch, length, vocab)."""
        length = tokens.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(length, device=tokens.device)
        hidden = self.embed(tokens) + self.position(torch.arange(length, device=tokens.device))
        return self.head(self.norm(self.blocks(hidden, mask=mask, is_causal=True)))


def random_windows(
    tokens: Tensor, batch: int, length: int, generator: torch.Generator
) -> tuple[Tensor, Tensor]:
    """`batch` random windows: inputs and next tokens, each (batch, length)."""
    starts = torch.randint(0, len(tokens) - length - 1, (batch,), generator=generator)
    windows = torch.stack([tokens[start : start + length + 1] for start in starts.tolist()])
    return windows[:, :-1], windows[:, 1:]


def held_out_windows(tokens: Tensor, count: int, length: int) -> tuple[Tensor, Tensor]:
    """The first `count` non-overlapping held-out windows (fewer if the text is short)."""
    count = min(count, (len(tokens) - 1) // length)
    windows = torch.stack([tokens[i * length : i * length + length + 1] for i in range(count)])
    return windows[:, :-1], windows[:, 1:]


def loss_module(
    spec: LossSpec, reference: str, iterations: int, ignore_index: int = -100
) -> FenchelYoungLoss:
    """The Fenchel–Young loss of `spec` with the configured reference measure over the char vocabulary."""
    q = None if reference == "unit" else torch.full((len(VOCAB),), 1.0 / len(VOCAB))
    return FenchelYoungLoss(
        spec.divergence, spec.alpha, q=q, iterations=iterations, ignore_index=ignore_index
    )


def token_loss(criterion: FenchelYoungLoss, logits: Tensor, targets: Tensor) -> Tensor:
    """The criterion over every position: (B, T, V) scores as (B·T, V) rows (the loss takes classes on dim 1,
    like `torch.nn.CrossEntropyLoss`); targets (B, T) indices or (B, T, V) probabilities, flattened alike."""
    return criterion(logits.flatten(0, -2), targets.flatten(0, logits.ndim - 2))


@dataclass
class Scores:
    """Held-out next-token metrics of one model under its loss's f-softargmax."""

    accuracy: float
    support: float
    gold_zero: float
    perplexity: float | None


def probabilities(logits: Tensor, spec: LossSpec, reference: str, iterations: int) -> Tensor:
    """The model's predicted distribution: the f-softargmax of its loss."""
    q = None if reference == "unit" else torch.full((logits.shape[-1],), 1.0 / logits.shape[-1])
    return f_softargmax(logits, divergence(spec.divergence, spec.alpha), q=q, iterations=iterations)


@torch.no_grad()
def score(
    model: nn.Module, inputs: Tensor, targets: Tensor, spec: LossSpec, reference: str, iterations: int
) -> Scores:
    """Top-1 accuracy, mean support size, share of gold tokens with p = 0 (perplexity for KL only)."""
    model.eval()
    logits = model(inputs)
    p = probabilities(logits, spec, reference, iterations)
    gold = p.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    dense = spec.divergence == "kl"
    return Scores(
        accuracy=float((logits.argmax(-1) == targets).double().mean()),
        support=float((p > 0).double().sum(-1).mean()),
        gold_zero=float((gold == 0).double().mean()),
        perplexity=float(torch.exp(-torch.log(gold.double()).mean())) if dense else None,
    )


@torch.no_grad()
def mean_support(model: nn.Module, inputs: Tensor, spec: LossSpec, reference: str, iterations: int) -> float:
    """Mean number of tokens with p > 0 per position."""
    model.eval()
    p = probabilities(model(inputs), spec, reference, iterations)
    model.train()
    return float((p > 0).double().sum(-1).mean())


def train(
    model: nn.Module,
    steps: int,
    learning_rate: float,
    next_batch: Callable[[], tuple[Tensor, Tensor]],
    objective: Callable[[Tensor, Tensor, Tensor], Tensor],
    on_log: Callable[[int], None] | None = None,
    log_every: int = 0,
) -> float:
    """AdamW with a linear warm-down; `objective(logits, inputs, targets)` is the loss. Returns the last loss."""
    optimiser = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda step: 1 - step / steps)
    model.train()
    value = float("nan")
    for step in range(steps):
        if on_log is not None and log_every and step % log_every == 0:
            on_log(step)
        inputs, targets = next_batch()
        loss = objective(model(inputs), inputs, targets)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        schedule.step()
        value = float(loss.detach())
    if on_log is not None and log_every:
        on_log(steps)
    return value
