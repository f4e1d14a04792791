"""Step `fdiv_losses-classify` (b): a linear model and an MLP trained with every loss × seed on the pool.

Each seed's models of one architecture share their initialisation and minibatch order, so losses are paired.
Test accuracy (argmax of the scores, the same for every f-softargmax) and the mean support size of the
loss's f-softargmax on the test split.
"""

from __future__ import annotations

import time

import polars as pl
import torch
from torch import nn

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_json, write_parquet
from stages.core.progress import progress
from stages.core.seeding import derive_seed
from stages.datasets.classification import to_arrays
from stages.methods.losses import FenchelYoungLoss, divergence, f_softargmax
from stages.models.mlp import MLPClassifier
from stages.models.training import Standardizer
from stages.papers.fdiv_losses.params import FdivParams
from stages.papers.fdiv_losses.threads import use_one_thread


def build_classifier(kind: str, in_dim: int, classes: int, hidden: int, seed: int) -> nn.Module:
    """`linear` (one affine map) or `mlp` (one hidden layer), initialised from `seed`."""
    torch.manual_seed(seed)
    return nn.Linear(in_dim, classes) if kind == "linear" else MLPClassifier(in_dim, [hidden], classes)


def reference_measure(params: FdivParams, classes: int) -> torch.Tensor | None:
    """None (unit q) or the uniform 1/V."""
    return None if params.reference == "unit" else torch.full((classes,), 1.0 / classes)


def fit(model: nn.Module, inputs, labels, criterion: nn.Module, params: FdivParams, seed: int) -> None:
    """Minibatch Adam for `classify.epochs` epochs, batch order from `seed`."""
    config = params.classify
    optimiser = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
    generator = torch.Generator().manual_seed(seed)
    model.train()
    for _ in range(config.epochs):
        for rows in torch.randperm(len(inputs), generator=generator).split(config.batch_size):
            loss = criterion(model(inputs[rows]), labels[rows])
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()


@torch.no_grad()
def evaluate(model: nn.Module, inputs, labels, params: FdivParams, label: str) -> dict[str, float]:
    """Test accuracy and mean support size of the loss's f-softargmax."""
    model.eval()
    scores = model(inputs)
    spec = params.losses[label]
    q = reference_measure(params, scores.shape[-1])
    p = f_softargmax(scores, divergence(spec.divergence, spec.alpha), q=q, iterations=params.iterations)
    return {
        "accuracy": float((scores.argmax(-1) == labels).double().mean()),
        "support": float((p > 0).double().sum(-1).mean()),
    }


def run(ctx: StepContext) -> None:
    """Train and score every (model, loss, seed)."""
    params: FdivParams = ctx.params
    use_one_thread()
    pool, test = to_arrays(read_parquet(ctx.input("pool"))), to_arrays(read_parquet(ctx.input("test")))
    standardize = Standardizer.fit(pool.features)
    inputs, labels = standardize(pool.features), torch.from_numpy(pool.labels)
    test_inputs, test_labels = standardize(test.features), torch.from_numpy(test.labels)
    classes = int(max(pool.labels.max(), test.labels.max())) + 1
    rows, timings = [], []
    runs = [
        (kind, label, seed)
        for seed in params.run_seeds()
        for kind in params.classify.models
        for label in params.classify_losses
    ]
    for kind, label, seed in progress(runs, desc="classify"):
        spec = params.losses[label]
        criterion = FenchelYoungLoss(
            spec.divergence, spec.alpha, q=reference_measure(params, classes), iterations=params.iterations
        )
        model = build_classifier(
            kind,
            inputs.shape[1],
            classes,
            params.classify.hidden,
            derive_seed(ctx.common.seed, "fdiv_losses", "init", kind, seed),
        )
        started = time.perf_counter()
        fit(
            model,
            inputs,
            labels,
            criterion,
            params,
            derive_seed(ctx.common.seed, "fdiv_losses", "batches", kind, seed),
        )
        timings.append(
            {"model": kind, "loss": label, "seed": seed, "seconds": round(time.perf_counter() - started, 3)}
        )
        rows.append(
            {"model": kind, "loss": label, "seed": seed}
            | evaluate(model, test_inputs, test_labels, params, label)
        )
    results = pl.DataFrame(rows).sort(["model", "loss", "seed"])
    for row in (
        results.group_by(["model", "loss"]).agg(pl.col("accuracy").mean()).sort(["model", "loss"]).iter_rows()
    ):
        ctx.log(f"{row[0]:>6} {row[1]:>10}: {row[2]:.4f}")
    write_parquet(results, ctx.output("classify_results"))
    write_json({"classify_seconds": timings, "reference": params.reference}, ctx.output("timings"))
