"""Step `a2i-train`: every data set × objective (RNP, RNP + A2I, full-input classifier) × seed.

RNP and A2I of one data set and seed start from the same initial nets (same torch seed) and differ only in the
instruction term; both train the attacker (RNP's is the inspection only). Dev metrics after every epoch go to
`history.parquet`; test metrics (rationale F1 and sparsity against the gold, accuracy, the selection-rate gap
of the label-independent tokens) and dev attack success after the last epoch go to `runs.parquet`; the first
seed's rationales of a few test reviews go to `examples.parquet` (for the figure).
"""

from __future__ import annotations

import polars as pl
import torch

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_parquet
from stages.core.progress import progress
from stages.core.seeding import derive_seed
from stages.datasets.rationales.reviews import INDEPENDENT
from stages.methods.rationale.config import RationaleConfig
from stages.methods.rationale.encoders import get_encoder
from stages.methods.rationale.metrics import selection_gap
from stages.methods.rationale.trainer import train_rationalizer
from stages.papers.a2i.data import graph_splits, text_splits
from stages.papers.a2i.params import ENCODER_OF, A2IParams

METRICS = ("accuracy", "sparsity", "precision", "recall", "f1", "attack_success", "selection_gap")


def load_splits(params: A2IParams, ctx: StepContext) -> dict[str, dict]:
    """Each listed data set's train/dev/test model inputs."""
    grid, seed = params.grid, ctx.common.seed
    out = {}
    if "reviews" in grid.datasets:
        out["reviews"] = text_splits(
            read_parquet(ctx.input("reviews")), params.embedding_dim, seed, grid.reviews.length + 8
        )
    if "rotten_tomatoes" in grid.datasets:
        rotten = grid.rotten_tomatoes
        frame = read_parquet(ctx.input("rotten"))
        out["rotten_tomatoes"] = text_splits(
            frame, params.embedding_dim, seed, rotten.max_len, rotten.min_count
        )
    if "motifs" in grid.datasets:
        out["motifs"] = graph_splits(read_parquet(ctx.input("graphs")))
    return out


def config_of(params: A2IParams, dataset: str) -> RationaleConfig:
    grid = params.grid
    if dataset == "motifs":
        return grid.graphs
    if dataset == "rotten_tomatoes":
        return grid.text.model_copy(update={"sparsity": grid.rotten_sparsity})
    return grid.text


def one_run(
    dataset: str, splits: dict, objective: str, config: RationaleConfig, seed: int, tokens
) -> tuple[dict, list[dict], object]:
    """Train one model; its test/dev metrics, its dev history and its test prediction."""
    encoder = get_encoder(ENCODER_OF[dataset])
    model = train_rationalizer(encoder, splits["train"], splits["dev"], config, objective, seed)
    test = model.predict(splits["test"], seed=seed)
    row = {metric: None for metric in METRICS}
    row.update(test.summary())
    row["attack_success"] = model.history[-1].get("attack_success")  # the card: attack success on dev
    row["target_sparsity"] = model.target
    if tokens is not None and objective != "full":
        row["selection_gap"] = selection_gap(test.selected, tokens, test.labels, INDEPENDENT)["max"]
    return row, model.history, test


def example_rows(dataset: str, objective: str, tokens, test, count: int) -> list[dict]:
    return [
        {
            "dataset": dataset,
            "objective": objective,
            "row": row,
            "label": int(test.labels[row]),
            "predicted": int(test.predicted[row]),
            "tokens": list(tokens[row][: len(test.selected[row])]),
            "gold": [int(v) for v in test.gold[row]] if test.gold is not None else [],
            "selected": [int(v) for v in test.selected[row]],
        }
        for row in range(min(count, len(test.selected)))
    ]


def run(ctx: StepContext) -> None:
    params: A2IParams = ctx.params
    torch.set_num_threads(1)  # tiny nets: one thread per process, the same bytes on every machine
    data = load_splits(params, ctx)
    test_tokens = {
        "reviews": read_parquet(ctx.input("reviews")).filter(pl.col("split") == "test")["tokens"].to_list()
    }
    runs, history, examples = [], [], []
    jobs = [
        (d, o, s) for d in params.grid.datasets for s in params.grid.seeds for o in params.grid.objectives
    ]
    for dataset, objective, seed in progress(jobs, desc="a2i runs"):
        run_seed = derive_seed(ctx.common.seed, "a2i", dataset, seed)  # shared by the objectives: paired runs
        tokens = test_tokens.get(dataset)
        row, trace, test = one_run(
            dataset, data[dataset], objective, config_of(params, dataset), run_seed, tokens
        )
        runs.append({"dataset": dataset, "objective": objective, "seed": seed, **row})
        history += [{"dataset": dataset, "objective": objective, "seed": seed, **record} for record in trace]
        if seed == params.grid.seeds[0] and dataset == "reviews":
            examples += example_rows(dataset, objective, tokens, test, params.examples)
        ctx.log(
            f"{dataset} {objective} seed {seed}: "
            + ", ".join(f"{k} {v:.3f}" for k, v in row.items() if isinstance(v, float))
        )
    write_parquet(
        pl.DataFrame(runs, infer_schema_length=None).with_columns(pl.col(METRICS).cast(pl.Float64)),
        ctx.output("runs"),
    )
    write_parquet(pl.DataFrame(history, infer_schema_length=None), ctx.output("history"))
    write_parquet(pl.DataFrame(examples, infer_schema_length=None), ctx.output("examples"))
