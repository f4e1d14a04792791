"""Step `sfbd-prepare`: the images (digits 8×8 by default, Fashion-MNIST 14×14 at `scale: full`) in [−1, 1],
split 80/20 stratified; per seed, the order that makes an image clean or noisy and its noise ε (drawn once,
kept); the MNIST-8×8 similar set; the evaluation CNN, trained on the clean training split only.

Writes `datasets.safetensors` (arrays), `eval_cnn.safetensors` (weights) and `prepared.json` (sizes, the CNN's
test accuracy, the distance floor of clean training images and the ceiling of the noisy ones).
"""

from __future__ import annotations

import numpy as np
import torch
from safetensors.numpy import save_file
from safetensors.torch import save_file as save_torch

from stages.core.context import StepContext
from stages.core.io import write_json
from stages.core.seeding import derive_seed, pin_threads
from stages.methods.diffusion.metrics import accuracy, image_distances, train_eval_cnn
from stages.papers.sfbd.data import digits, fashion_14x14, mnist_8x8, seed_noise, split_for, stratified_order
from stages.papers.sfbd.params import SFBDParams


def train_test(params: SFBDParams, base_seed: int) -> dict[str, np.ndarray]:
    """Train/test images and labels of the grid's dataset (train cut to `max_train` if set)."""
    grid = params.grid
    images, labels = digits() if grid.dataset == "digits" else fashion_14x14()
    order = stratified_order(labels, derive_seed(params.split_seed, "sfbd", "split"))
    n_test = round(params.test_fraction * len(labels))
    test, train = order[:n_test], order[n_test:]
    if grid.max_train is not None:
        train = train[: grid.max_train]
    return {
        "train_x": images[train],
        "train_y": labels[train],
        "test_x": images[test],
        "test_y": labels[test],
    }


def run(ctx: StepContext) -> None:
    params: SFBDParams = ctx.params
    grid = params.grid
    pin_threads(ctx.common.threads)
    arrays = train_test(params, ctx.common.seed)
    train = arrays["train_x"]
    for seed in grid.seeds:
        arrays[f"order_{seed}"] = stratified_order(
            arrays["train_y"], derive_seed(ctx.common.seed, "sfbd", "clean-order", seed)
        ).astype(np.int64)
        arrays[f"noise_{seed}"] = seed_noise(ctx.common.seed, seed, train.shape)
    if grid.similar:
        arrays["similar_x"] = mnist_8x8()
    save_file({key: np.ascontiguousarray(value) for key, value in arrays.items()}, ctx.output("datasets"))
    side = train.shape[-1]
    cnn = train_eval_cnn(
        train, arrays["train_y"], side, grid.cnn_epochs, derive_seed(ctx.common.seed, "sfbd", "eval-cnn")
    )
    save_torch({key: value.contiguous() for key, value in cnn.state_dict().items()}, ctx.output("cnn"))
    test = arrays["test_x"]
    n_eval = grid.eval_samples or len(test)
    rng = np.random.default_rng(derive_seed(ctx.common.seed, "sfbd", "floor"))
    floor = image_distances(train[rng.choice(len(train), min(n_eval, len(train)), replace=False)], test, cnn)
    first = grid.seeds[0]
    bounds = {}
    for fraction in grid.fractions:
        split = split_for(train, arrays[f"order_{first}"], arrays[f"noise_{first}"], fraction, grid.sigma)
        rows = rng.choice(len(split.noisy), min(n_eval, len(split.noisy)), replace=False)
        bounds[str(fraction)] = {
            "clean_images": len(split.clean),
            "noisy_images": len(split.noisy),
            "noisy_ceiling": image_distances(np.clip(split.noisy[rows], -1, 1), test, cnn),
        }
    summary = {
        "dataset": grid.dataset,
        "shape": list(train.shape[1:]),
        "train": len(train),
        "test": len(test),
        "similar": len(arrays.get("similar_x", [])),
        "sigma": grid.sigma,
        "eval_cnn_test_accuracy": round(accuracy(cnn, test, arrays["test_y"]), 4),
        "clean_train_floor": floor,
        "fractions": bounds,
    }
    ctx.log(
        f"{len(train)} train / {len(test)} test images; evaluation CNN accuracy "
        f"{summary['eval_cnn_test_accuracy']:.3f}; floor {floor}"
    )
    torch.set_num_threads(ctx.common.threads)
    write_json(summary, ctx.output("prepared"))
