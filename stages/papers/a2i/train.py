"""Step `a2i-train`: every data set × objective (RNP, RNP + A2I, full-input classifier) × seed.

RNP and A2I of one data set and seed start from the same initial nets (same torch seed) and differ only in the
instruction term; both train the attacker (RNP's is the inspection only). Dev metrics after every epoch go to
`history.parquet`; test metrics (rationale F1 and sparsity against the gold, accuracy, per class the share of
rationales without a label-bearing token, the selection-rate gap of the separators), dev accuracy and dev
attack success after the last epoch (pooled, per class, worst and most-flipped class) go to `runs.parquet`;
the first seed's rationales of a few test reviews go to `examples.parquet` (for the figure).
"""

from __future__ import annotations

import polars as pl
import torch

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_parquet
from stages.core.seeding import derive_seed
from stages.datasets.rationales.reviews import INDEPENDENT, LABEL_WORDS
from stages.methods.rationale.config import RationaleConfig
from stages.methods.rationale.encoders import get_encoder
from stages.methods.rationale.metrics import selection_gap, share_without_label_token
from stages.methods.rationale.trainer import train_rationalizer
from stages.models.workers import map_runs
from stages.papers.a2i.data import graph_splits, text_splits
from stages.papers.a2i.params import ENCODER_OF, A2IParams

METRICS = (
    "accuracy",
    "dev_accuracy",
    "sparsity",
    "precision",
    "recall",
    "f1",
    "attack_success",
    "attack_success_0",
    "attack_success_1",
    "attack_success_worst",
    "attack_success_best",
    "planted_attack_0",
    "planted_attack_1",
    "planted_attack_worst",
    "selection_gap",
    "no_label_token_0",
    "no_label_token_1",
    "no_label_token_gap",
)


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
    dataset: str,
    splits: dict,
    objective: str,
    config: RationaleConfig,
    seed: int,
    tokens,
    dev_tokens=None,
) -> tuple[dict, list[dict], object]:
    """Train one model; its test/dev metrics, its dev history and its test prediction (`tokens`, `dev_tokens`:
    the test and dev reviews' words, for the label-bearing shares and the planted attack)."""
    encoder = get_encoder(ENCODER_OF[dataset])
    model = train_rationalizer(encoder, splits["train"], splits["dev"], config, objective, seed)
    test = model.predict(splits["test"], seed=seed)
    row = {metric: None for metric in METRICS}
    row.update(test.summary())
    row.update(dev_attack(model.history[-1]))
    row["dev_accuracy"] = model.history[-1]["accuracy"]
    row["target_sparsity"] = model.target
    if tokens is not None and objective != "full":
        row["selection_gap"] = selection_gap(test.selected, tokens, test.labels, INDEPENDENT)["max"]
        shares = share_without_label_token(test.selected, tokens, test.labels, LABEL_WORDS)
        row.update({f"no_label_token_{label}": share for label, share in shares.items()})
        row["no_label_token_gap"] = abs(shares[1] - shares[0])
    if dev_tokens is not None and objective != "full":
        planted = planted_attack(model, splits["dev"], dev_tokens)
        row.update({f"planted_attack_{label}": value for label, value in planted.items()})
        row["planted_attack_worst"] = min(planted.values())
    return row, model.history, test


@torch.no_grad()
def planted_attack(model, dev, dev_tokens: list[list[str]]) -> dict[int, float]:
    """Per class c, the share of dev reviews the predictor reads as 1 − c from the rationale the data plants
    for an attacker: only the other aspect's sentiment words of polarity 1 − c (no trained attacker). It shows
    whether the predictor *can* be flipped in each class, apart from whether the trained attacker finds how."""
    model.predictor.eval()
    batch = model.encoder.batch(dev, list(range(len(dev))))
    labels = batch.labels.numpy()
    z = torch.zeros_like(batch.mask)
    for row, (text, label) in enumerate(zip(dev_tokens, labels, strict=True)):
        for position, token in enumerate(text[: z.shape[1]]):
            z[row, position] = float(token in LABEL_WORDS[1 - int(label)])
    flipped = model.predictor(batch, z * batch.mask).argmax(-1).numpy() == 1 - labels
    return {label: float(flipped[labels == label].mean()) for label in (0, 1)}


def dev_attack(last: dict) -> dict:
    """Dev attack success after the last epoch (the card's), pooled and per class; `worst`: the class the
    attacker flips least (inspection needs both classes flipped), `best`: the one it flips most (instruction
    needs no class left open). Empty (None) for the full-input classifier."""
    if "attack_success" not in last:
        return {}
    by_class = [last["attack_success_0"], last["attack_success_1"]]
    return {
        "attack_success": last["attack_success"],
        "attack_success_0": by_class[0],
        "attack_success_1": by_class[1],
        "attack_success_worst": min(by_class),
        "attack_success_best": max(by_class),
    }


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
    data = load_splits(params, ctx)
    reviews = read_parquet(ctx.input("reviews")) if "reviews" in params.grid.datasets else None
    test_tokens, dev_tokens = {}, {}
    if reviews is not None:
        test_tokens["reviews"] = reviews.filter(pl.col("split") == "test")["tokens"].to_list()
        dev_tokens["reviews"] = reviews.filter(pl.col("split") == "dev")["tokens"].to_list()
    jobs = [
        (d, o, s) for d in params.grid.datasets for s in params.grid.seeds for o in params.grid.objectives
    ]
    tasks = [
        (
            dataset,
            data[dataset],
            objective,
            config_of(params, dataset),
            derive_seed(ctx.common.seed, "a2i", dataset, seed),  # shared by the objectives: paired runs
            test_tokens.get(dataset),
            dev_tokens.get(dataset),
        )
        for dataset, objective, seed in jobs
    ]
    # each run on one thread, `common.threads` runs side by side (the outputs do not depend on it)
    results = map_runs(one_run, tasks, ctx.common.threads, desc="a2i runs")
    runs, history, examples = [], [], []
    for (dataset, objective, seed), (row, trace, test) in zip(jobs, results, strict=True):
        runs.append({"dataset": dataset, "objective": objective, "seed": seed, **row})
        history += [{"dataset": dataset, "objective": objective, "seed": seed, **record} for record in trace]
        if seed == params.grid.seeds[0] and dataset == "reviews":
            examples += example_rows(dataset, objective, test_tokens[dataset], test, params.examples)
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
