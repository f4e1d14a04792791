"""Step `activation_comm-sweep`: f = replace at k = j for each swept depth, on the dev items of both games:
B's log-probability of the gold answer (the selection criterion) and its greedy answer's correctness."""

from __future__ import annotations

import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_parquet
from stages.core.progress import progress
from stages.methods.communication.graft import Graft, graft_logprob_rows, graft_rows
from stages.models.lm.hooks import residuals_at
from stages.papers.activation_comm.games import is_correct
from stages.papers.activation_comm.models import load_agents, swept_depths
from stages.papers.activation_comm.params import ActivationCommParams


def sweep_items(
    sender, receiver, items: pl.DataFrame, depths: list[int], params: ActivationCommParams
) -> list[dict]:
    """Per dev item, every depth's graft in one batch (row r: k = j = depths[r])."""
    rows = []
    decoding = params.decoding
    for item in progress(items.iter_rows(named=True), desc="k = j sweep", total=items.height):
        ids_a, ids_b = sender.chat_ids(item["x_a"]), receiver.chat_ids(item["x_b"])
        answer_ids = receiver.tokenizer.encode(item["answer"])
        states = residuals_at(sender, ids_a, depths)
        plans = [(Graft(depth, depth, "replace"), states[depth]) for depth in depths]
        logprobs = graft_logprob_rows(receiver, ids_b, answer_ids, plans)
        outputs = graft_rows(receiver, ids_b, plans, decoding.max_new_tokens, decoding.top_p)
        for depth, logprob, output in zip(depths, logprobs, outputs, strict=True):
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
