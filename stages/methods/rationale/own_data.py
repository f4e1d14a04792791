"""Rationales of your own labelled text table (`icml25 rationalize`): train RNP + A2I (or RNP) on it and write
every row's selected token spans as a Parquet table.

Text is lower-cased and split into words and punctuation (`tokenize`); the label column must have exactly two
values (encoded in sorted order, recorded in the summary). Word vectors are seeded random and frozen (no
download). A share of the rows (`--dev-fraction`) is held out to report accuracy and attack success.

The sparsity and continuity penalties are means over all tokens, so their gradient per token falls as 1 / length
while the classification term's does not: the official weights (12 and 10) were set for beer reviews of about
150 tokens. They are scaled by (mean text length / 150), so short texts are not ruled by the sparsity term
(`length_scaled_weights`). If the selected share still misses the target by more than `SPARSITY_TOLERANCE`
(absolute), or the held-out accuracy is within `CHANCE_MARGIN` of the majority label's share, the summary
carries a warning (the command prints it to stderr).

Every option is range-checked before anything is read (`check_options`): a bad value stops with one line naming
the option (`icml25 rationalize` exits with status 2).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import polars as pl

from stages.core.errors import DataValidationError, MissingSourceError, ParamsError
from stages.core.io import atomic_path
from stages.datasets.user_table import encode_labels
from stages.methods.rationale.config import RationaleConfig
from stages.methods.rationale.encoders import get_encoder
from stages.methods.rationale.text import build_vocab, encode_texts, random_embeddings
from stages.methods.rationale.trainer import train_rationalizer

TOKEN = re.compile(r"\w+|[^\w\s]")
OFFICIAL_LENGTH = 150  # tokens of a beer review, for which the official weights below were set
OFFICIAL_SPARSITY_WEIGHT = 12.0
OFFICIAL_CONTINUITY_WEIGHT = 10.0
SPARSITY_TOLERANCE = 0.05  # |selected share − target| above this: a warning
CHANCE_MARGIN = 0.1  # dev accuracy below the majority class's share + this: a warning
SPAN_SCHEMA = {
    "row": pl.Int64,
    "label": pl.String,
    "predicted": pl.String,
    "token_start": pl.Int64,
    "token_end": pl.Int64,
    "char_start": pl.Int64,
    "char_end": pl.Int64,
    "text": pl.String,
}


def tokenize(text: str) -> list[tuple[str, int, int]]:
    """Lower-cased words and punctuation marks with their character offsets [start, end)."""
    return [(match.group().lower(), match.start(), match.end()) for match in TOKEN.finditer(text)]


def read_text_table(
    path: str | Path, text_column: str, label_column: str
) -> tuple[list[str], pl.Series, tuple]:
    """Texts, 0/1 labels and the raw label values of a Parquet/CSV table; errors name the file, column, row."""
    path = Path(path)
    if not path.is_file():
        raise MissingSourceError(f"{path}: input table not found")
    try:
        frame = pl.read_csv(path) if path.suffix.lower() == ".csv" else pl.read_parquet(path)
    except (pl.exceptions.PolarsError, OSError) as error:
        raise DataValidationError(f"{path}: not a readable table ({error})") from None
    for column in (text_column, label_column):
        if column not in frame.columns:
            raise DataValidationError(f"{path}: no column '{column}' (found {frame.columns})")
    if frame[text_column].dtype != pl.String:
        raise DataValidationError(
            f"{path}: text column '{text_column}' is {frame[text_column].dtype}, not text"
        )
    texts = frame[text_column].to_list()
    for row, text in enumerate(texts):
        if text is None or not TOKEN.search(text):
            raise DataValidationError(f"{path}: column '{text_column}' row {row} is empty (no words)")
    labels, encoding = encode_labels(frame[label_column], str(path))
    if len(encoding.raw) != 2:
        raise DataValidationError(
            f"{path}: label column '{label_column}' has {len(encoding.raw)} distinct value(s) "
            f"{list(encoding.raw)[:5]}; rationalization needs exactly 2"
        )
    return texts, labels, encoding.raw


def spans_of(selected: np.ndarray) -> list[tuple[int, int]]:
    """Maximal runs of 1s as [start, end) token index pairs."""
    padded = np.concatenate([[0], np.asarray(selected, dtype=np.int8), [0]])
    edges = np.flatnonzero(np.diff(padded))
    return [(int(start), int(end)) for start, end in zip(edges[::2], edges[1::2], strict=True)]


def _in_open_interval(option: str, value: float, low: float, high: float) -> None:
    if not (low < value < high):  # also refuses NaN
        raise ParamsError(f"{option} must lie in ({low:g}, {high:g}); got {value}")


def check_options(
    objective: str, sparsity: float, epochs: int, max_len: int, dev_fraction: float, seed: int
) -> None:
    """Range-check the command's values; a bad one raises `ParamsError` naming the option (exit status 2)."""
    if objective not in ("rnp", "a2i"):
        raise ParamsError(f"--objective must be rnp or a2i; got {objective!r}")
    _in_open_interval("--sparsity", sparsity, 0.0, 1.0)
    _in_open_interval("--dev-fraction", dev_fraction, 0.0, 1.0)
    for option, value in (("--epochs", epochs), ("--max-len", max_len)):
        if value < 1:
            raise ParamsError(f"{option} must be at least 1; got {value}")
    if seed < 0:
        raise ParamsError(f"--seed must be at least 0; got {seed}")


def length_scaled_weights(words: list[list[str]], max_len: int) -> tuple[float, float, float]:
    """The mean text length (tokens, cut at `max_len`) and the sparsity and continuity weights scaled to it:
    the official 12 and 10 × (mean length / 150)."""
    length = float(np.mean([min(len(row), max_len) for row in words]))
    scale = length / OFFICIAL_LENGTH
    return length, OFFICIAL_SPARSITY_WEIGHT * scale, OFFICIAL_CONTINUITY_WEIGHT * scale


def sparsity_warnings(selected_share: float, target: float) -> list[str]:
    """A warning when the selected share misses the target by more than `SPARSITY_TOLERANCE`."""
    if abs(selected_share - target) <= SPARSITY_TOLERANCE:
        return []
    return [
        f"selected share {selected_share:.3f} misses the target --sparsity {target} by more than "
        f"{SPARSITY_TOLERANCE} (try more --epochs or more rows; the spans reflect the share actually selected)"
    ]


def accuracy_warnings(dev: dict, dev_labels: list[int]) -> list[str]:
    """A warning when the held-out accuracy is within `CHANCE_MARGIN` of always answering the majority label."""
    if "accuracy" not in dev or not dev_labels:
        return []
    majority = max(np.mean(dev_labels), 1 - np.mean(dev_labels))
    if dev["accuracy"] >= majority + CHANCE_MARGIN:
        return []
    return [
        f"held-out accuracy {dev['accuracy']:.3f} is within {CHANCE_MARGIN} of the majority label's share "
        f"{majority:.3f}: the rationales may carry little of the label (try more --epochs or more rows)"
    ]


def rationalize_file(
    input_path: str | Path,
    output_path: str | Path,
    text_column: str = "text",
    label_column: str = "label",
    objective: str = "a2i",
    sparsity: float = 0.15,
    epochs: int = 10,
    max_len: int = 128,
    dev_fraction: float = 0.2,
    seed: int = 0,
) -> dict:
    """Train on the table, write one row per selected span (row, labels, token and character offsets, text);
    the summary reports the length-scaled penalty weights and any warning (selected share off target)."""
    check_options(objective, sparsity, epochs, max_len, dev_fraction, seed)
    texts, labels, raw = read_text_table(input_path, text_column, label_column)
    tokens = [tokenize(text) for text in texts]
    words = [[token for token, _, _ in row] for row in tokens]
    label_list = labels.to_list()
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(texts))
    n_dev = round(len(texts) * dev_fraction)
    dev_rows, train_rows = order[:n_dev], order[n_dev:]
    if len(train_rows) < 2 or len(set(label_list[row] for row in train_rows)) < 2:
        raise DataValidationError(f"{input_path}: too few rows to train on both labels ({len(texts)} rows)")
    vocab = build_vocab([words[row] for row in train_rows])
    embeddings = random_embeddings(len(vocab), 64, seed)

    def encode(rows) -> object:
        return encode_texts(
            [words[r] for r in rows], [label_list[r] for r in rows], vocab, embeddings, max_len
        )

    length, sparsity_weight, continuity_weight = length_scaled_weights(
        [words[r] for r in train_rows], max_len
    )
    config = RationaleConfig(
        epochs=epochs,
        sparsity=sparsity,
        hidden=64,
        batch_size=32,
        lr=2e-3,
        sparsity_weight=sparsity_weight,
        continuity_weight=continuity_weight,
    )
    encoder = get_encoder("gru")
    model = train_rationalizer(
        encoder, encode(train_rows), encode(dev_rows) if n_dev else None, config, objective, seed
    )
    prediction = model.predict(encode(range(len(texts))), seed=seed)
    spans = []
    for row, selected in enumerate(prediction.selected):
        for start, end in spans_of(selected):
            spans.append(
                {
                    "row": row,
                    "label": str(raw[label_list[row]]),
                    "predicted": str(raw[int(prediction.predicted[row])]),
                    "token_start": start,
                    "token_end": end,
                    "char_start": tokens[row][start][1],
                    "char_end": tokens[row][end - 1][2],
                    "text": texts[row][tokens[row][start][1] : tokens[row][end - 1][2]],
                }
            )
    table = pl.DataFrame(spans, schema=SPAN_SCHEMA)
    output = Path(output_path)
    with atomic_path(output) as tmp:
        table.write_parquet(tmp)
    dev = model.history[-1] if model.history else {}
    share = float(np.mean(np.concatenate(prediction.selected)))
    return {
        "rows": len(texts),
        "spans": table.height,
        "labels": {str(value): index for index, value in enumerate(raw)},
        "objective": objective,
        "sparsity": round(share, 4),
        "target_sparsity": sparsity,
        "mean_length": round(length, 2),
        "weights": {"sparsity": round(sparsity_weight, 4), "continuity": round(continuity_weight, 4)},
        "dev": {key: round(float(value), 4) for key, value in dev.items()},
        "warnings": sparsity_warnings(share, sparsity)
        + accuracy_warnings(dev, [label_list[row] for row in dev_rows]),
        "output": str(output),
    }
