"""The three data sets as model inputs: reviews and Rotten Tomatoes as `TextData` (one vocabulary per set, built
on its training split), motif graphs as `GraphData` (one-hot degree node features)."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.methods.rationale.graph import GraphData, make_graph_data
from stages.methods.rationale.text import TextData, build_vocab, encode_texts, random_embeddings

SPLITS = ("train", "dev", "test")
MAX_DEGREE = 8


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


def degree_features(nodes: int, edges: np.ndarray, cap: int = MAX_DEGREE) -> np.ndarray:
    """One-hot node degree (degrees above `cap` share the last slot): structure only, no label."""
    degree = np.bincount(edges.ravel(), minlength=nodes)
    return np.eye(cap + 1, dtype=np.float32)[np.minimum(degree, cap)]


def graph_splits(frame: pl.DataFrame) -> dict[str, GraphData]:
    """Train/dev/test `GraphData` of the motif table (one row per graph; node features: one-hot degree)."""
    out = {}
    for split in SPLITS:
        rows = frame.filter(pl.col("split") == split)
        edges = [
            np.stack([s, t], axis=1)
            for s, t in zip(rows["source"].to_list(), rows["target"].to_list(), strict=True)
        ]
        features = [degree_features(n, e) for n, e in zip(rows["nodes"].to_list(), edges, strict=True)]
        out[split] = make_graph_data(
            features, edges, rows["label"].to_list(), rows["gold"].to_list(), where=split
        )
    return out
