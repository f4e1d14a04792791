"""Step `vanishing_ideals-prepare`: stratified train / validation subsets of Fashion-MNIST's train split and a
test subset of its test split (disjoint; seeded), and the "pretrained" CIFAR-style ResNet trained on the train
subset only.

Writes `datasets.safetensors` (uint8 pixels, labels, the training pixel mean/std), `base.safetensors` (the
network's weights) and `prepared.json` (sizes, the full network's accuracies and parameter count).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import torch
from safetensors.numpy import save_file
from safetensors.torch import save_file as save_torch

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_json
from stages.core.seeding import derive_seed, pin_threads
from stages.datasets.classification import to_arrays
from stages.datasets.splits import stratified_subsample
from stages.methods.ideals.resnet import count_parameters, train_resnet
from stages.methods.ideals.vinet import predict
from stages.papers.vanishing_ideals.data import SPLITS, load_prepared, new_net
from stages.papers.vanishing_ideals.params import VanishingIdealsParams


def draw_splits(table: pl.DataFrame, params: VanishingIdealsParams, seed: int) -> dict[str, pl.DataFrame]:
    """Train and validation from the train split (disjoint), test from the test split, each stratified."""
    base = params.grid.base
    train_rows = table.filter(pl.col("split") == "train")
    wanted = base.train_images + base.validation_images
    if wanted > train_rows.height:
        raise ValueError(
            f"vanishing_ideals.{params.scale}.base: train_images + validation_images = {wanted} exceed the "
            f"{train_rows.height} training rows"
        )
    both = stratified_subsample(train_rows, wanted, derive_seed(seed, "vanishing_ideals", "train"))
    validation = stratified_subsample(
        both, base.validation_images, derive_seed(seed, "vanishing_ideals", "val")
    )
    train = both.filter(~pl.col("sample_id").is_in(validation["sample_id"].implode()))
    test = stratified_subsample(
        table.filter(pl.col("split") == "test"),
        base.test_images,
        derive_seed(seed, "vanishing_ideals", "test"),
    )
    return {"train": train, "validation": validation, "test": test}


def run(ctx: StepContext) -> None:
    params: VanishingIdealsParams = ctx.params
    pin_threads(ctx.common.threads)
    splits = draw_splits(read_parquet(ctx.input("table")), params, ctx.common.seed)
    arrays: dict[str, np.ndarray] = {}
    for name in SPLITS:
        data = to_arrays(splits[name], dtype=np.uint8)
        arrays[f"{name}_x"], arrays[f"{name}_y"] = data.features, data.labels
    pixels = arrays["train_x"].astype(np.float64) / 255.0
    arrays["pixel_mean"] = np.array([pixels.mean()], dtype=np.float64)
    arrays["pixel_std"] = np.array([pixels.std()], dtype=np.float64)
    save_file(arrays, ctx.output("datasets"))
    prepared = load_prepared(ctx.output("datasets"), params)
    seed = derive_seed(ctx.common.seed, "vanishing_ideals", "base")
    torch.manual_seed(seed)
    net = new_net(params)
    base = params.grid.base
    train_resnet(
        net,
        prepared.images["train"],
        torch.from_numpy(prepared.labels["train"]),
        base.epochs,
        base.batch_size,
        base.lr,
        seed,
    )
    save_torch({key: value.contiguous() for key, value in net.state_dict().items()}, ctx.output("base"))
    accuracy = {
        split: round(float(np.mean(predict(net, prepared.images[split]) == prepared.labels[split])), 4)
        for split in SPLITS
    }
    summary = {
        "sizes": {split: len(prepared.labels[split]) for split in SPLITS},
        "image_side": base.image_side,
        "convolutions": net.n_convs,
        "full_net_parameters": count_parameters(net),
        "full_net_accuracy": accuracy,
    }
    ctx.log(f"base net: {summary['full_net_parameters']} parameters, accuracy {accuracy}")
    write_json(summary, ctx.output("prepared"))
