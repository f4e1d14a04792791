"""Step `activation_comm-sweep`: f = replace at k = j for each swept depth, on both games: B's log-probability of
the gold answer on the dev items (the selection criterion) and on the test items (the held-out items the chosen
depth is tested on against every other depth). No greedy answers: at 135M parameters exact match barely moves."""

from __future__ import annotations

import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_parquet
from stages.core.progress import progress
from stages.methods.communication.graft import Graft, graft_logprobs_shared
from stages.models.lm.hooks import residuals_at
from stages.papers.activation_comm.models import load_agents, swept_depths
from stages.papers.activation_comm.params import ActivationCommParams


def sweep_items(
    sender, receiver, items: pl.DataFrame, depths: list[int], params: ActivationCommParams
) -> list[dict]:
    """Every (dev item, depth) graft, items batched so that items × depths rows fit `batch_rows`."""
    rows = []
    listed = list(items.iter_rows(named=True))
    size = max(1, params.decoding.batch_rows // len(depths))
    chunks = [listed[start : start + size] for start in range(0, len(listed), size)]
    for chunk in progress(chunks, desc=f"k = j sweep, items in batches of ≤ {size}", total=len(chunks)):
        rows += sweep_chunk(sender, receiver, chunk, depths, params)
    return rows


def sweep_chunk(
    sender, receiver, items: list[dict], depths: list[int], params: ActivationCommParams
) -> list[dict]:
    """Row (item i, depth d): f = replace at k = j = d; B's gold log-probability, the rows of an item sharing B's
    pass up to its last prompt token."""
    prompts = [receiver.chat_ids(item["x_b"]) for item in items]
    answers = [receiver.tokenizer.encode(item["answer"]) for item in items]
    row_prompt, plans = [], []
    for index, item in enumerate(items):
        states = residuals_at(sender, sender.chat_ids(item["x_a"]), depths)
        row_prompt += [index] * len(depths)
        plans += [(Graft(depth, depth, "replace"), states[depth]) for depth in depths]
    logprobs = graft_logprobs_shared(receiver, prompts, row_prompt, answers, plans)
    return [
        {
            "game": items[row_prompt[row]]["game"],
            "split": items[row_prompt[row]]["split"],
            "item": items[row_prompt[row]]["item"],
            "depth": plans[row][0].j,
            "logprob": logprob,
        }
        for row, logprob in enumerate(logprobs)
    ]


def run(ctx: StepContext) -> None:
    params: ActivationCommParams = ctx.params
    sender, receiver = load_agents(params)
    if params.receiver is None or sender.n_layers == receiver.n_layers:
        depths = swept_depths(params.grid.depth_fractions, sender.n_layers)
    else:
        raise ValueError("activation_comm: the k = j sweep needs A and B with the same number of layers")
    items = read_parquet(ctx.input("games"))
    rows = sweep_items(sender, receiver, items, depths, params)
    frame = pl.DataFrame(rows).with_columns(pl.lit(sender.n_layers).alias("layers"))
    write_parquet(frame, ctx.output("sweep"))
    dev = items.filter(pl.col("split") == "dev").height
    ctx.log(f"{len(depths)} depths × {items.height} items ({dev} dev, the rest test)")
