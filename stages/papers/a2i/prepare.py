"""Step `a2i-prepare`: the generated reviews (planted gold spans), the motif graphs (gold motif edges) and the
Rotten Tomatoes reviews as tokens (no annotations), each split train/dev/test; `datasets.json` records sizes,
the planted fraction and the checks that the generator planted what it says."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.errors import DataValidationError
from stages.core.io import write_json, write_parquet
from stages.core.seeding import derive_seed
from stages.datasets.rationales.motifs import generate_motif_graphs
from stages.datasets.rationales.reviews import INDEPENDENT, NEGATIVE, POSITIVE, generate_reviews
from stages.datasets.text import TextSourceParams, corpus_file, read_reviews
from stages.methods.rationale.own_data import tokenize
from stages.papers.a2i.params import A2IParams, RottenParams

GRAPH_SCHEMA = {
    "graph_id": pl.Int64,
    "split": pl.String,
    "label": pl.Int64,
    "nodes": pl.Int64,
    "source": pl.List(pl.Int64),
    "target": pl.List(pl.Int64),
    "gold": pl.List(pl.Int8),
}


def review_checks(reviews: pl.DataFrame) -> dict:
    """What the generator planted: gold share, label purity of gold sentiment words, sentiment words outside the
    gold (none of the label's polarity; the other aspect's opposite-polarity words), independent-token rates."""
    tokens, gold, labels = reviews["tokens"].to_list(), reviews["gold"].to_list(), reviews["label"].to_list()
    polarity = {**{word: 1 for word in POSITIVE}, **{word: 0 for word in NEGATIVE}}
    in_gold = [
        polarity[t] == y
        for text, g, y in zip(tokens, gold, labels, strict=True)
        for t, f in zip(text, g, strict=True)
        if f and t in polarity
    ]
    outside = [
        polarity[t] == y
        for text, g, y in zip(tokens, gold, labels, strict=True)
        for t, f in zip(text, g, strict=True)
        if not f and t in polarity
    ]
    per_class = {
        token: {
            str(label): float(
                np.mean([text.count(token) for text, y in zip(tokens, labels, strict=True) if y == label])
            )
            for label in (0, 1)
        }
        for token in INDEPENDENT
    }
    return {
        "planted_fraction": float(sum(map(sum, gold)) / sum(map(len, tokens))),
        "gold_sentiment_matches_label": float(np.mean(in_gold)),
        "label_polarity_words_outside_gold": int(sum(outside)),
        "opposite_polarity_words_per_review": float((len(outside) - sum(outside)) / len(tokens)),
        "independent_tokens_per_review": per_class,
    }


def rotten_tokens(params: RottenParams, seed: int) -> pl.DataFrame:
    """Rotten Tomatoes reviews tokenized, drawn at random (`max_rows`), split train/dev/test."""
    reviews = read_reviews(corpus_file(TextSourceParams(corpus_path=params.corpus_path)))
    rng = np.random.default_rng(seed)
    order = rng.permutation(reviews.height)[: params.max_rows]
    reviews = reviews[np.sort(order).tolist()]
    n = reviews.height
    n_dev, n_test = round(n * params.dev_fraction), round(n * params.test_fraction)
    split = np.array(["train"] * n, dtype=object)
    shuffled = rng.permutation(n)
    split[shuffled[:n_dev]] = "dev"
    split[shuffled[n_dev : n_dev + n_test]] = "test"
    tokens = [[token for token, _, _ in tokenize(text)] for text in reviews["text"].to_list()]
    frame = pl.DataFrame(
        {"id": np.arange(n), "split": split.tolist(), "label": reviews["label"], "tokens": tokens},
        schema={"id": pl.Int64, "split": pl.String, "label": pl.Int64, "tokens": pl.List(pl.String)},
    )
    empty = frame.filter(pl.col("tokens").list.len() == 0)
    if empty.height:
        raise DataValidationError(f"rotten_tomatoes: review {empty['id'][0]} has no tokens")
    return frame


def graph_table(params, seed: int) -> pl.DataFrame:
    graphs = generate_motif_graphs(params, seed)
    return pl.DataFrame(
        [
            {
                **{k: g[k] for k in ("graph_id", "split", "label", "nodes")},
                "source": g["edges"][:, 0].tolist(),
                "target": g["edges"][:, 1].tolist(),
                "gold": g["gold"].tolist(),
            }
            for g in graphs
        ],
        schema=GRAPH_SCHEMA,
    )


def summary(frame: pl.DataFrame) -> dict:
    counts = frame.group_by("split", "label").len().sort("split", "label")
    return {f"{row['split']}_{row['label']}": row["len"] for row in counts.iter_rows(named=True)}


def run(ctx: StepContext) -> None:
    params: A2IParams = ctx.params
    grid, seed = params.grid, ctx.common.seed
    datasets: dict = {}
    reviews = generate_reviews(grid.reviews, derive_seed(seed, "a2i", "reviews"))
    datasets["reviews"] = {
        "rows": summary(reviews),
        **review_checks(reviews.filter(pl.col("split") == "train")),
    }
    write_parquet(reviews, ctx.output("reviews"))
    graphs = graph_table(grid.motifs, derive_seed(seed, "a2i", "motifs"))
    gold = graphs.filter(pl.col("split") == "train")["gold"].to_list()
    datasets["motifs"] = {
        "rows": summary(graphs),
        "planted_fraction": float(sum(map(sum, gold)) / sum(map(len, gold))),
    }
    write_parquet(graphs, ctx.output("graphs"))
    rotten = (
        rotten_tokens(grid.rotten_tomatoes, derive_seed(seed, "a2i", "rotten_tomatoes"))
        if "rotten_tomatoes" in grid.datasets
        else pl.DataFrame(
            schema={"id": pl.Int64, "split": pl.String, "label": pl.Int64, "tokens": pl.List(pl.String)}
        )
    )
    datasets["rotten_tomatoes"] = {"rows": summary(rotten)}
    write_parquet(rotten, ctx.output("rotten"))
    write_json(datasets, ctx.output("datasets"))
    ctx.log(
        f"planted fraction: reviews {datasets['reviews']['planted_fraction']:.3f}, "
        f"graphs {datasets['motifs']['planted_fraction']:.3f}"
    )
