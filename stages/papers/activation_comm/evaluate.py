"""Step `activation_comm-evaluate`: pick k = j from the dev sweep (mean gold log-probability over both games),
train AC(W)'s map there on the corpus, then answer every test item with every method, recording the output,
its correctness, the token counts P_A, P_B, M, T and the item's analytic FLOPs (Eq. 1–2)."""

from __future__ import annotations

import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_json, write_parquet
from stages.core.progress import progress
from stages.methods.communication import baselines
from stages.methods.communication.compute import activation_flops, natural_language_flops, single_flops
from stages.methods.communication.graft import Graft, graft_rows
from stages.methods.communication.learned_map import MapTraining, final_token_activations, train_map
from stages.models.lm.hooks import residuals
from stages.papers.activation_comm.games import is_correct
from stages.papers.activation_comm.models import load_agents
from stages.papers.activation_comm.params import ActivationCommParams

GRAFTS = {  # method: (f, mapped, all tokens)
    "sum": ("sum", False, False),
    "mean": ("mean", False, False),
    "replace": ("replace", False, False),
    "ac_w": ("replace", True, False),
    "all_tokens_sum": ("sum", False, True),
}


def best_depth(sweep: pl.DataFrame) -> int:
    """The k = j with the highest mean gold log-probability over both games' dev items (ties: shallower)."""
    means = sweep.group_by("depth").agg(pl.col("logprob").mean()).sort("depth")
    return int(means.sort(["logprob", "depth"], descending=[True, False])["depth"][0])


def learn_map(sender, receiver, sentences: list[str], depth: int, params: ActivationCommParams):
    source = final_token_activations(sender, sentences, depth)
    target = source if receiver is sender else final_token_activations(receiver, sentences, depth)
    training = MapTraining(params.map.epochs, params.map.batch_size, params.map.learning_rate)
    return train_map(source, target, training)


def answer_item(sender, receiver, item: dict, depth: int, weight, params: ActivationCommParams) -> list[dict]:
    """Every method's answer to one test item, with its token counts and FLOPs."""
    dec, a, b = params.decoding, sender.shape, receiver.shape
    ids_a, ids_b = sender.chat_ids(item["x_a"]), receiver.chat_ids(item["x_b"])
    rows = []

    def record(method: str, output, p_a: int, p_b: int, m: int, flops: float) -> None:
        rows.append(
            {
                "game": item["game"],
                "item": item["item"],
                "method": method,
                "output": output.text,
                "correct": is_correct(output.text, item["answer"], item["candidates"]),
                "p_a": p_a,
                "p_b": p_b,
                "m": m,
                "t": output.passes,
                "flops": flops,
            }
        )

    for method in params.methods:
        if method == "skyline":
            out = baselines.skyline(receiver, item["x_a"], item["x_b"], dec.max_new_tokens, dec.top_p).answer
            record(method, out, 0, out.prompt_tokens, 0, single_flops(b, out.prompt_tokens, out.passes))
        elif method == "natural_language":
            exchange = baselines.natural_language(
                sender,
                receiver,
                item["x_a"],
                item["x_b"],
                dec.max_new_tokens,
                dec.max_message_tokens,
                dec.top_p,
            )
            message, out = exchange.message, exchange.answer
            m = message.passes
            flops = natural_language_flops(a, b, message.prompt_tokens, out.prompt_tokens - m, m, out.passes)
            record(method, out, message.prompt_tokens, out.prompt_tokens - m, m, flops)
    # silent and every graft read x_B: one batch, a row each (silent's row has no graft)
    batched = [method for method in params.methods if method == "silent" or method in GRAFTS]
    states = residuals(sender, ids_a, depth)
    plans = [plan_of(method, states, depth, weight) for method in batched]
    outputs = graft_rows(receiver, ids_b, plans, dec.max_new_tokens, dec.top_p)
    for method, out in zip(batched, outputs, strict=True):
        if method == "silent":
            record(method, out, 0, len(ids_b), 0, single_flops(b, len(ids_b), out.passes))
            continue
        combination, mapped, all_tokens = GRAFTS[method]
        flops = activation_flops(a, b, len(ids_a), len(ids_b), out.passes, depth, combination, mapped)
        if all_tokens:
            flops += (min(len(ids_a), len(ids_b)) - 1) * min(a.hidden, b.hidden)
        record(method, out, len(ids_a), len(ids_b), 0, flops)
    order = {method: index for index, method in enumerate(params.methods)}
    return sorted(rows, key=lambda row: order[row["method"]])


def plan_of(method: str, states, depth: int, weight):
    """The graft of a method (None for silent) with A's stream, mapped by W for AC(W)."""
    if method == "silent":
        return None
    combination, mapped, all_tokens = GRAFTS[method]
    graft = Graft(depth, depth, combination, weight if mapped else None, all_tokens)
    return graft, (states @ weight.T if mapped else states)


def run(ctx: StepContext) -> None:
    params: ActivationCommParams = ctx.params
    sender, receiver = load_agents(params)
    depth = best_depth(read_parquet(ctx.input("sweep")))
    sentences = read_parquet(ctx.input("sentences"))["text"].to_list()
    weight, losses = learn_map(sender, receiver, sentences, depth, params)
    ctx.log(f"k = j = {depth}; AC(W) map MSE by epoch: {[round(x, 4) for x in losses]}")
    items = read_parquet(ctx.input("games")).filter(pl.col("split") == "test")
    rows = []
    for item in progress(items.iter_rows(named=True), desc="methods × test items", total=items.height):
        rows += answer_item(sender, receiver, item, depth, weight, params)
    write_parquet(pl.DataFrame(rows), ctx.output("results"))
    write_json(
        {
            "depth": depth,
            "layers": sender.n_layers,
            "map_mse_by_epoch": [round(x, 6) for x in losses],
            "sentences": len(sentences),
            "sender": sender.name,
            "receiver": receiver.name,
        },
        ctx.output("setup"),
    )
