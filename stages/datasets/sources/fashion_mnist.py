"""`fashion_mnist`: the Debian package `dataset-fashion-mnist` (standard IDX files, 60k train / 10k test)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from stages.core.errors import MissingSourceError
from stages.core.inputs import folder_problems
from stages.core.params import StrictModel
from stages.datasets.classification import classification_schema, from_arrays
from stages.datasets.idx import read_idx
from stages.datasets.source import CLASSIFICATION, Source


class FashionMnistParams(StrictModel):
    """Where the Fashion-MNIST IDX files are."""

    source_dir: str = "/usr/share/datasets/fashion-mnist"


FASHION_MNIST_FILES = {
    ("train", "images"): "train-images-idx3-ubyte.gz",
    ("train", "labels"): "train-labels-idx1-ubyte.gz",
    ("test", "images"): "t10k-images-idx3-ubyte.gz",
    ("test", "labels"): "t10k-labels-idx1-ubyte.gz",
}


def load_fashion_mnist(source_dir: str | Path) -> pl.DataFrame:
    """Read the four Fashion-MNIST IDX files from `source_dir` (train rows first, then test)."""
    source_dir = Path(source_dir)
    missing = [name for name in FASHION_MNIST_FILES.values() if not (source_dir / name).is_file()]
    if missing:
        raise MissingSourceError(
            f"Fashion-MNIST not found in {source_dir} (missing {', '.join(missing)}). Install it with "
            "`sudo apt-get install dataset-fashion-mnist` (Debian/Ubuntu), or set "
            "common.datasets.fashion_mnist.source_dir to a folder holding the IDX files, or choose another "
            "dataset (mnist5k, digits) in your paper's params."
        )
    parts = []
    first_id = 0
    for split in ("train", "test"):
        images = read_idx(source_dir / FASHION_MNIST_FILES[(split, "images")])
        labels = read_idx(source_dir / FASHION_MNIST_FILES[(split, "labels")])
        if len(images) != len(labels):
            raise MissingSourceError(
                f"{source_dir}: {split} images ({len(images)}) and labels ({len(labels)}) differ in length"
            )
        parts.append(from_arrays(images, labels, [split] * len(labels), first_id=first_id))
        first_id += len(labels)
    return pl.concat(parts)


SOURCE = Source(
    "fashion_mnist",
    CLASSIFICATION,
    FashionMnistParams,
    lambda params: load_fashion_mnist(params.source_dir),
    "Fashion-MNIST, 28×28 grey images, 10 classes, 60k/10k (Debian dataset-fashion-mnist)",
    files=lambda params: [Path(params.source_dir) / name for name in FASHION_MNIST_FILES.values()],
    deps={"source_dir": "${common.datasets.fashion_mnist.source_dir}"},
    schema=classification_schema(784, 0, 255, 10),
    check=lambda params: folder_problems(
        params.source_dir, "common.datasets.fashion_mnist.source_dir", FASHION_MNIST_FILES.values()
    ),
)
