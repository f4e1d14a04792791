"""The three data sets as model inputs: reviews and Rotten Tomatoes as `TextData` (one vocabulary per set, built
on its training split), motif graphs as `GraphData` (constant node features)."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.methods.rationale.graph import GraphData, make_graph_data
from stages.methods.rationale.text import TextData, build_vocab, encode_texts, random_embeddings

SPLITS = ("train", "dev", "test")


def text_splits(
    frame: pl.DataFrame, dim: int, seed: int, max_len: int, min_count: int = 1
) -> dict[str, TextData]:
    """Train/dev/test `TextData` of a token table (`tokens`, `label`, `split`, optional `gold`)."""
    train = frame.filter(pl.col("split") == "train")
    vocab = build_vocab(train["tokens"].to_list(), min_count)
    embeddings = random_embeddings(len(vocab), dim, seed)
    out = {}
    for split in SPLITS:
        rows = frame.filter(pl.col("split") == split)
        gold = rows["gold"].to_list() if "gold" in rows.columns else None
        out[split] = encode_texts(
            rows["tokens"].to_list(), rows["label"].to_list(), vocab, embeddings, max_len, gold, where=split
        )
    return out


def graph_splits(frame: pl.DataFrame) -> dict[str, GraphData]:
    """Train/dev/test `GraphData` of the motif table (one row per graph; node feature: a constant 1)."""
    out = {}
    for split in SPLITS:
        rows = frame.filter(pl.col("split") == split)
        edges = [
            np.stack([s, t], axis=1)
            for s, t in zip(rows["source"].to_list(), rows["target"].to_list(), strict=True)
        ]
        features = [np.ones((n, 1), dtype=np.float32) for n in rows["nodes"].to_list()]
        out[split] = make_graph_data(
            features, edges, rows["label"].to_list(), rows["gold"].to_list(), where=split
        )
    return out
