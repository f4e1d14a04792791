"""Readers of the BeerAdvocate and hotel review formats the rationalization papers use (not shipped offline:
point them at your copy). Each returns a Polars frame `tokens` (list[str]), `label` (0/1) and, for annotated
sets, `gold` (list[int8], one flag per token).

- Beer reviews `reviews.aspect{k}.{train,heldout}.txt[.gz]`: one review per line, `s0 s1 s2<TAB>text`, aspect
  scores in [0, 1]; score ≥ 0.6 → 1, ≤ 0.4 → 0, others dropped. `balance=True` subsamples the majority class
  (the paper's class balancing of the training set, a data step).
- Beer annotations `annotations.json`: JSON lines with `x` (tokens), `y` (aspect scores) and `"0"`, `"1"`,
  `"2"` (per aspect, a list of `[start, end)` token spans); rows without spans for the aspect are dropped.
- Hotel `hotel_{Location,Service,Cleanliness}.{train,dev}` and the annotated set: TSV with a header, columns
  `id`, `label` (0/1), `text` and, annotated, `rationale` (space-separated 0/1 per token).
"""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import numpy as np
import polars as pl

from stages.core.errors import DataValidationError, MissingSourceError

POSITIVE_AT, NEGATIVE_AT = 0.6, 0.4
SCHEMA = {"tokens": pl.List(pl.String), "label": pl.Int64}
GOLD_SCHEMA = {**SCHEMA, "gold": pl.List(pl.Int8)}


def _lines(path: str | Path) -> list[str]:
    path = Path(path)
    if not path.is_file():
        raise MissingSourceError(f"{path}: file not found")
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            return handle.read().splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise DataValidationError(f"{path}: not readable UTF-8 text ({error})") from None


def binarize(score: float) -> int | None:
    """1 for a score ≥ 0.6, 0 for ≤ 0.4, None in between (dropped)."""
    return 1 if score >= POSITIVE_AT else 0 if score <= NEGATIVE_AT else None


def balance_classes(frame: pl.DataFrame, seed: int) -> pl.DataFrame:
    """Subsample the majority class to the minority's size (rows keep their order)."""
    counts = [frame.filter(pl.col("label") == label).height for label in (0, 1)]
    keep = min(counts)
    rng = np.random.default_rng(seed)
    chosen = []
    for label in (0, 1):
        rows = np.flatnonzero(frame["label"].to_numpy() == label)
        chosen.append(np.sort(rng.choice(rows, size=keep, replace=False)))
    return frame[np.sort(np.concatenate(chosen)).tolist()]


def read_beer_reviews(path: str | Path, aspect: int, balance: bool = False, seed: int = 0) -> pl.DataFrame:
    """Beer reviews of one aspect (0 appearance, 1 aroma, 2 palate) with binarized labels."""
    rows = []
    for number, line in enumerate(_lines(path), start=1):
        if not line.strip():
            continue
        scores, sep, text = line.partition("\t")
        try:
            values = [float(value) for value in scores.split()]
            score = values[aspect]
        except (ValueError, IndexError):
            raise DataValidationError(
                f"{path}: line {number}: expected 'scores<TAB>text' with a score for aspect {aspect}"
            ) from None
        label = binarize(score)
        if label is not None and sep:
            rows.append({"tokens": text.split(), "label": label})
    frame = pl.DataFrame(rows, schema=SCHEMA)
    return balance_classes(frame, seed) if balance else frame


def read_beer_annotations(path: str | Path, aspect: int) -> pl.DataFrame:
    """Human-annotated beer reviews of one aspect: tokens, binarized label, gold flags from the spans."""
    rows = []
    for number, line in enumerate(_lines(path), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            tokens, score, spans = item["x"], float(item["y"][aspect]), item[str(aspect)]
        except (json.JSONDecodeError, KeyError, IndexError, TypeError, ValueError) as error:
            raise DataValidationError(
                f"{path}: line {number}: not a beer annotation record ({error})"
            ) from None
        label = binarize(score)
        if not spans or label is None:
            continue
        gold = [0] * len(tokens)
        for start, end in spans:
            if not 0 <= start < end <= len(tokens):
                raise DataValidationError(
                    f"{path}: line {number}: span [{start}, {end}) outside {len(tokens)} tokens"
                )
            gold[start:end] = [1] * (end - start)
        rows.append({"tokens": list(tokens), "label": label, "gold": gold})
    return pl.DataFrame(rows, schema=GOLD_SCHEMA)


def read_hotel(path: str | Path) -> pl.DataFrame:
    """A hotel TSV (header; `label`, `text`, optional `rationale` columns) as tokens, labels (and gold)."""
    lines = _lines(path)
    table = list(csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    if not table:
        raise DataValidationError(f"{path}: empty file")
    header = [name.strip() for name in table[0]]
    missing = [name for name in ("label", "text") if name not in header]
    if missing:
        raise DataValidationError(f"{path}: missing column(s) {missing} in header {header}")
    annotated = "rationale" in header
    rows = []
    for number, fields in enumerate(table[1:], start=2):
        record = dict(zip(header, fields, strict=False))
        tokens = record.get("text", "").split()
        if record.get("label") not in ("0", "1"):
            raise DataValidationError(f"{path}: line {number}: label {record.get('label')!r} is not 0 or 1")
        row = {"tokens": tokens, "label": int(record["label"])}
        if annotated:
            gold = [int(flag) for flag in record.get("rationale", "").split()]
            if len(gold) != len(tokens):
                raise DataValidationError(
                    f"{path}: line {number}: {len(gold)} rationale flags for {len(tokens)} tokens"
                )
            row["gold"] = gold
        rows.append(row)
    return pl.DataFrame(rows, schema=GOLD_SCHEMA if annotated else SCHEMA)
