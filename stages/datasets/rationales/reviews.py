"""Generated reviews with a planted aspect span (the gold rationale) that alone carries the label.

Each review mixes, in a random order of sentences:

- one *target-aspect span* (gold): an appearance noun and three sentiment words of the label's polarity — the
  only tokens that depend on the label;
- one *other-aspect span* (not gold): an aroma noun with descriptors of its own (fruity, malty, ...) and
  `opposite_words` sentiment words of the polarity opposite to the label (0 to 3; as real multi-aspect
  reviews do: a review positive on appearance may say "bad aroma"). These words come from the same sentiment
  vocabulary as the target span's, so an attacker can select them in either class to flip a predictor that
  reads sentiment words without their aspect;
- filler sentences of neutral words, separated by "." and "-" — label-independent tokens that occur equally
  often in both classes, which a biased generator can select at different rates per class.

Classes are balanced. The gold share is about 4 / `length` tokens. With `opposite_words` > 0 every review holds
sentiment words of both polarities, the label's (gold, target aspect) outnumbering the other's.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from pydantic import Field

from stages.core.params import StrictModel

TARGET_NOUNS = ("appearance", "color", "head", "pour", "lacing", "clarity")
OTHER_NOUNS = ("aroma", "smell", "nose", "scent", "bouquet", "finish")
POSITIVE = ("great", "lovely", "excellent", "beautiful", "superb", "fine", "rich", "bright")
NEGATIVE = ("awful", "poor", "bad", "ugly", "dull", "thin", "murky", "weak")
FILLER = (
    "the", "a", "this", "beer", "i", "it", "was", "with", "had", "some", "bottle", "served", "from", "of",
    "in", "to", "really", "quite", "my", "glass", "pint", "on", "tap", "at", "bar", "friend", "tried", "label",
    "brewery", "year", "night", "store", "bought", "for", "we", "shared", "after", "dinner", "one", "more",
)  # fmt: skip
DESCRIPTORS = ("fruity", "malty", "hoppy", "sweet", "sour", "smoky", "spicy", "earthy")
LABEL_WORDS = {0: NEGATIVE, 1: POSITIVE}  # the label-bearing words of each class (the target aspect's)
INDEPENDENT = (".", "-")  # label-independent separators, equally frequent in both classes
SPLITS = ("train", "dev", "test")


class ReviewParams(StrictModel):
    """Sizes of the generated review set."""

    n_train: int = Field(4000, ge=2)
    n_dev: int = Field(500, ge=2)
    n_test: int = Field(500, ge=2)
    length: int = Field(30, ge=12, description="about this many tokens per review")
    opposite_words: int = Field(
        1, ge=0, le=3, description="sentiment words of the opposite polarity in the other-aspect span"
    )


def _span(nouns, words, rng: np.random.Generator) -> list[str]:
    """An aspect noun and three distinct descriptors."""
    return [
        str(rng.choice(nouns)),
        *(words[index] for index in rng.choice(len(words), size=3, replace=False)),
    ]


def _other_span(label: int, opposite_words: int, rng: np.random.Generator) -> list[str]:
    """The other aspect: a noun, `opposite_words` sentiment words of polarity 1 − label, the rest descriptors
    (three words in a random order)."""
    noun, *descriptors = _span(OTHER_NOUNS, DESCRIPTORS, rng)
    opposite = NEGATIVE if label == 1 else POSITIVE
    chosen = [opposite[index] for index in rng.choice(len(opposite), size=opposite_words, replace=False)]
    words = chosen + descriptors[: 3 - opposite_words]
    return [noun, *(words[index] for index in rng.permutation(3))]


def _filler(n: int, rng: np.random.Generator) -> list[str]:
    """About `n` tokens of neutral sentences, each ended by "." or "-"."""
    out: list[str] = []
    while len(out) < n:
        out += [str(word) for word in rng.choice(FILLER, size=int(rng.integers(3, 8)))]
        out.append(str(rng.choice(INDEPENDENT)))
    return out


def generate_review(
    label: int, length: int, rng: np.random.Generator, opposite_words: int = 0
) -> tuple[list[str], list[int]]:
    """One review's tokens and 0/1 gold flags (the target span)."""
    target = [*_span(TARGET_NOUNS, POSITIVE if label == 1 else NEGATIVE, rng), "."]
    other = [*_other_span(label, opposite_words, rng), "."]
    filler = _filler(length - len(target) - len(other), rng)
    cut = sorted(rng.choice(len(filler) + 1, size=2, replace=True).tolist())
    pieces = [filler[: cut[0]], filler[cut[0] : cut[1]], filler[cut[1] :]]
    spans = [(target, 1), (other, 0)]
    if rng.random() < 0.5:
        spans.reverse()
    tokens: list[str] = []
    gold: list[int] = []
    for piece, (span, flag) in zip(pieces, [*spans, ([], 0)], strict=True):
        tokens += piece + span
        gold += [0] * len(piece) + [flag] * (len(span) - 1) + [0] * (1 if span else 0)
    return tokens, gold


def generate_reviews(params: ReviewParams, seed: int) -> pl.DataFrame:
    """Balanced review set: columns `id`, `split`, `label`, `tokens` (list[str]), `gold` (list[int8])."""
    rng = np.random.default_rng(seed)
    rows = []
    sizes = dict(zip(SPLITS, (params.n_train, params.n_dev, params.n_test), strict=True))
    for split, n in sizes.items():
        labels = rng.permutation(np.arange(n) % 2)
        for label in labels:
            tokens, gold = generate_review(int(label), params.length, rng, params.opposite_words)
            rows.append(
                {"id": len(rows), "split": split, "label": int(label), "tokens": tokens, "gold": gold}
            )
    return pl.DataFrame(
        rows,
        schema={
            "id": pl.Int64,
            "split": pl.String,
            "label": pl.Int64,
            "tokens": pl.List(pl.String),
            "gold": pl.List(pl.Int8),
        },
    )
