"""Step `bronet-mnist`: one BRO dense layer 784 → 10 (rank r·784, identity start) on MNIST-5k in [0, 1], trained
with Adam and cross-entropy per seed; its radius margin/√2 (an orthogonal last layer, L = 1). Writes
`mnist.parquet`: per seed and test item, the label, correctness and certified radius."""

from __future__ import annotations

import polars as pl
import torch

from stages.core.context import StepContext
from stages.core.io import write_parquet
from stages.core.progress import progress
from stages.core.seeding import derive_seed, pin_threads
from stages.methods.lipschitz.nets import BRODenseNet
from stages.methods.lipschitz.train import TrainOptions, evaluate, train
from stages.papers.bronet.data import load_split
from stages.papers.bronet.params import BRONetParams


def run(ctx: StepContext) -> None:
    params: BRONetParams = ctx.params
    pin_threads(params.threads)
    setting = params.mnist
    train_x, train_y, test_x, test_y = load_split(ctx.input("datasets"), "mnist")
    options = TrainOptions(
        loss="ce",
        epochs=setting.epochs,
        batch=setting.batch,
        optimizer="adam",
        lr=setting.lr,
        weight_decay=0.0,
    )
    frames = []
    for seed in progress(setting.seeds, "bronet mnist"):
        run_seed = derive_seed(ctx.common.seed, "bronet", "mnist", seed)
        torch.manual_seed(run_seed)
        model = BRODenseNet(784, 10, setting.rank)
        train(model, train_x, train_y, options, run_seed)
        result = evaluate(model, test_x, test_y)
        ctx.log(f"seed {seed}: {result.summary()}")
        frames.append(
            pl.DataFrame(
                {
                    "seed": [seed] * len(test_y),
                    "item": range(len(test_y)),
                    "label": test_y.numpy(),
                    "correct": result.correct,
                    "radius": result.radii,
                }
            )
        )
    write_parquet(pl.concat(frames), ctx.output("mnist"))
