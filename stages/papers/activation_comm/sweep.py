"""Step `activation_comm-sweep`: f = replace at k = j for each swept depth, on the dev items of both games:
B's log-probability of the gold answer (the selection criterion) and its greedy answer's correctness."""

from __future__ import annotations

import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_parquet
from stages.core.progress import progress
from stages.methods.communication.graft import Graft, graft_logprobs_shared, graft_shared
from stages.models.lm.hooks import residuals_at
from stages.papers.activation_comm.games import is_correct
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
    for chunk in progress(chunks, desc=f"k = j sweep, dev items in batches of ≤ {size}", total=len(chunks)):
        rows += sweep_chunk(sender, receiver, chunk, depths, params)
    return rows


def sweep_chunk(
    sender, receiver, items: list[dict], depths: list[int], params: ActivationCommParams
) -> list[dict]:
    """Row (item i, depth d): f = replace at k = j = d; B's gold log-probability and greedy answer, the rows of
    an item sharing B's pass up to its last prompt token."""
    prompts = [receiver.chat_ids(item["x_b"]) for item in items]
    answers = [receiver.tokenizer.encode(item["answer"]) for item in items]
    row_prompt, plans = [], []
    for index, item in enumerate(items):
        states = residuals_at(sender, sender.chat_ids(item["x_a"]), depths)
        row_prompt += [index] * len(depths)
        plans += [(Graft(depth, depth, "replace"), states[depth]) for depth in depths]
    logprobs = graft_logprobs_shared(receiver, prompts, row_prompt, answers, plans)
    dec = params.decoding
    outputs = graft_shared(receiver, prompts, row_prompt, plans, dec.max_new_tokens, dec.top_p)
    rows = []
    for row, (logprob, output) in enumerate(zip(logprobs, outputs, strict=True)):
        item, depth = items[row_prompt[row]], plans[row][0].j
        rows.append(
            {
                "game": item["game"],
                "item": item["item"],
                "depth": depth,
                "logprob": logprob,
                "output": output.text,
                "correct": is_correct(output.text, item["answer"], item["candidates"]),
            }
        )
    return rows


def run(ctx: StepContext) -> None:
    params: ActivationCommParams = ctx.params
    sender, receiver = load_agents(params)
    if params.receiver is None or sender.n_layers == receiver.n_layers:
        depths = swept_depths(params.grid.depth_fractions, sender.n_layers)
    else:
        raise ValueError("activation_comm: the k = j sweep needs A and B with the same number of layers")
    items = read_parquet(ctx.input("games")).filter(pl.col("split") == "dev")
    rows = sweep_items(sender, receiver, items, depths, params)
    frame = pl.DataFrame(rows).with_columns(pl.lit(sender.n_layers).alias("layers"))
    write_parquet(frame, ctx.output("sweep"))
    ctx.log(f"{len(depths)} depths × {items.height} dev items")
