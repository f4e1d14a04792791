"""Token rationales: a bi-GRU generator/attacker and a predictor with its own bi-GRU (the `gru` encoder).

Word vectors are frozen (the paper: 100-d GloVe; offline here: seeded random vectors). The predictor reads
`embedding · z`, runs its own bi-GRU over the real tokens and max-pools them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from stages.core.errors import DataValidationError
from stages.methods.rationale.base import Batch, Encoder
from stages.methods.rationale.config import RationaleConfig

PAD, UNK = "<pad>", "<unk>"


@dataclass
class TextData:
    """Padded token ids, real-token mask, 0/1 labels, optional 0/1 gold rationales, frozen word vectors."""

    tokens: torch.Tensor  # [N, L] long
    mask: torch.Tensor  # [N, L] float
    labels: torch.Tensor  # [N] long
    embeddings: torch.Tensor  # [V, D] float
    gold: torch.Tensor | None = None  # [N, L] float

    def __len__(self) -> int:
        return int(self.labels.shape[0])


def build_vocab(texts: Sequence[Sequence[str]], min_count: int = 1) -> dict[str, int]:
    """Token → id over `texts` (0 padding, 1 unknown; then by count, ties by token) keeping tokens seen ≥ min_count."""
    counts = Counter(token for text in texts for token in text)
    kept = sorted((token for token, n in counts.items() if n >= min_count), key=lambda t: (-counts[t], t))
    return {PAD: 0, UNK: 1, **{token: index + 2 for index, token in enumerate(kept)}}


def random_embeddings(vocab_size: int, dim: int, seed: int) -> torch.Tensor:
    """Frozen word vectors: seeded N(0, 1/dim) rows, the padding row zero."""
    rng = np.random.default_rng(seed)
    vectors = rng.normal(0.0, 1.0 / np.sqrt(dim), size=(vocab_size, dim)).astype(np.float32)
    vectors[0] = 0.0
    return torch.from_numpy(vectors)


def encode_texts(
    texts: Sequence[Sequence[str]],
    labels: Sequence[int],
    vocab: dict[str, int],
    embeddings: torch.Tensor,
    max_len: int,
    gold: Sequence[Sequence[int]] | None = None,
    where: str = "texts",
) -> TextData:
    """Token lists (cut at `max_len`) → `TextData`; an empty text, a label outside {0, 1} or a gold list of
    another length is an error naming the row."""
    n = len(texts)
    if n == 0:
        raise DataValidationError(f"{where}: no rows")
    tokens = np.zeros((n, max_len), dtype=np.int64)
    mask = np.zeros((n, max_len), dtype=np.float32)
    gold_array = np.zeros((n, max_len), dtype=np.float32) if gold is not None else None
    for row, (text, label) in enumerate(zip(texts, labels, strict=True)):
        if len(text) == 0:
            raise DataValidationError(f"{where}: row {row} has an empty text")
        if label not in (0, 1):
            raise DataValidationError(f"{where}: row {row} has label {label!r}; labels must be 0 or 1")
        cut = list(text)[:max_len]
        tokens[row, : len(cut)] = [vocab.get(token, 1) for token in cut]
        mask[row, : len(cut)] = 1.0
        if gold_array is not None:
            if len(gold[row]) != len(text):
                raise DataValidationError(
                    f"{where}: row {row} has {len(gold[row])} gold flags for {len(text)} tokens"
                )
            gold_array[row, : len(cut)] = list(gold[row])[:max_len]
    return TextData(
        torch.from_numpy(tokens),
        torch.from_numpy(mask),
        torch.as_tensor(np.asarray(labels, dtype=np.int64)),
        embeddings,
        None if gold_array is None else torch.from_numpy(gold_array),
    )


class BiGRU(nn.Module):
    """A bidirectional one-layer GRU over [B, L, D] inputs → [B, L, 2H]."""

    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.gru = nn.GRU(dim, hidden, batch_first=True, bidirectional=True)

    def forward(self, vectors: torch.Tensor) -> torch.Tensor:
        return self.gru(vectors)[0]


class TextSelector(nn.Module):
    """Generator / attacker: frozen vectors → bi-GRU → LayerNorm → dropout → linear → 2 logits per token."""

    def __init__(self, embeddings: torch.Tensor, config: RationaleConfig) -> None:
        super().__init__()
        self.embed = nn.Embedding.from_pretrained(embeddings, freeze=True, padding_idx=0)
        self.encoder = BiGRU(embeddings.shape[1], config.hidden)
        self.norm = nn.LayerNorm(2 * config.hidden)
        self.dropout = nn.Dropout(config.dropout)
        self.head = nn.Linear(2 * config.hidden, 2)

    def forward(self, batch: Batch) -> torch.Tensor:
        states = self.encoder(self.embed(batch.inputs) * batch.mask.unsqueeze(-1))
        return self.head(self.dropout(self.norm(states)))


class TextPredictor(nn.Module):
    """Predictor: `embedding · z` → its own bi-GRU → max-pool over the real tokens → linear → 2 logits."""

    def __init__(self, embeddings: torch.Tensor, config: RationaleConfig) -> None:
        super().__init__()
        self.embed = nn.Embedding.from_pretrained(embeddings, freeze=True, padding_idx=0)
        self.encoder = BiGRU(embeddings.shape[1], config.hidden)
        self.head = nn.Linear(2 * config.hidden, 2)

    def forward(self, batch: Batch, z: torch.Tensor) -> torch.Tensor:
        mask = batch.mask.unsqueeze(-1)
        states = self.encoder(self.embed(batch.inputs) * (z * batch.mask).unsqueeze(-1))
        pooled = (states * mask + (1.0 - mask) * -1e6).max(dim=1).values
        return self.head(pooled)


class TextEncoder(Encoder):
    """The `gru` encoder: rows of a `TextData`, token rationales."""

    name = "gru"
    ordered = True

    def size(self, data: TextData) -> int:
        return len(data)

    def batch(self, data: TextData, rows: Sequence[int]) -> Batch:
        index = torch.as_tensor(np.asarray(rows, dtype=np.int64))
        length = max(int(data.mask[index].sum(dim=1).max().item()), 1)  # trim columns all padding
        return Batch(
            inputs=data.tokens[index, :length],
            mask=data.mask[index, :length],
            labels=data.labels[index],
            gold=None if data.gold is None else data.gold[index, :length],
            rows=index,
        )

    def selector(self, data: TextData, config: RationaleConfig) -> nn.Module:
        return TextSelector(data.embeddings, config)

    def predictor(self, data: TextData, config: RationaleConfig) -> nn.Module:
        return TextPredictor(data.embeddings, config)
