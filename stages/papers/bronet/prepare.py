"""Step `bronet-prepare`: Fashion-MNIST subsets (stratified from its train and test splits) zero-padded from
28 × 28 to 32 × 32 in [0, 1] (LipConvNet's five stride-2 stages), and MNIST-5k (28 × 28, its own split), read
from the shared `data-<name>` tables. Writes `datasets.safetensors` and `prepared.json` (sizes, class counts,
the training mean and standard deviation the nets standardise with)."""

from __future__ import annotations

import numpy as np
import polars as pl
from safetensors.numpy import save_file

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_json
from stages.core.seeding import derive_seed
from stages.datasets.classification import to_arrays
from stages.datasets.splits import stratified_subsample
from stages.papers.bronet.params import BRONetParams


def images_of(frame: pl.DataFrame, pad: int) -> tuple[np.ndarray, np.ndarray]:
    """(N, 1, 28 + 2·pad, 28 + 2·pad) float32 in [0, 1] and int64 labels of a 28 × 28 classification table."""
    arrays = to_arrays(frame)
    images = arrays.features.reshape(-1, 1, 28, 28) / 255.0
    if pad:
        images = np.pad(images, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    return np.ascontiguousarray(images, dtype=np.float32), arrays.labels


def split(frame: pl.DataFrame, name: str, size: int | None, seed: int) -> pl.DataFrame:
    rows = frame.filter(pl.col("split") == name)
    return stratified_subsample(rows, size, seed).sort("sample_id")


def run(ctx: StepContext) -> None:
    params: BRONetParams = ctx.params
    grid = params.grid
    fashion = read_parquet(ctx.input("fashion_mnist"))
    mnist = read_parquet(ctx.input("mnist5k"))
    arrays: dict[str, np.ndarray] = {}
    sizes = {"fashion_train": grid.train_size, "fashion_test": grid.test_size}
    for key, size in sizes.items():
        part = split(fashion, key.split("_")[1], size, derive_seed(ctx.common.seed, "bronet", key))
        arrays[f"{key}_x"], arrays[f"{key}_y"] = images_of(part, pad=2)
    for name in ("train", "test"):
        arrays[f"mnist_{name}_x"], arrays[f"mnist_{name}_y"] = images_of(split(mnist, name, None, 0), pad=0)
    save_file(arrays, ctx.output("datasets"))
    train = arrays["fashion_train_x"]
    summary = {
        "fashion_mnist": {
            "train": len(train),
            "test": len(arrays["fashion_test_x"]),
            "shape": list(train.shape[1:]),
            "train_class_counts": np.bincount(arrays["fashion_train_y"], minlength=10).tolist(),
            "mean": round(float(train.mean()), 6),
            "std": round(float(train.std()), 6),
        },
        "mnist5k": {"train": len(arrays["mnist_train_x"]), "test": len(arrays["mnist_test_x"])},
    }
    ctx.log(
        f"Fashion-MNIST {summary['fashion_mnist']['train']}/{summary['fashion_mnist']['test']}, MNIST-5k "
        f"{summary['mnist5k']['train']}/{summary['mnist5k']['test']}"
    )
    write_json(summary, ctx.output("prepared"))
