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
from stages.methods.communication.graft import Graft, graft_batch, graft_shared
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


def item_chunks(items: list[dict], rows_per_item: int, batch_rows: int) -> list[list[dict]]:
    """Consecutive runs of items whose rows (items × methods) fit one batch of `batch_rows`."""
    size = max(1, batch_rows // max(1, rows_per_item))
    return [items[start : start + size] for start in range(0, len(items), size)]


def answer_items(
    sender, receiver, items: list[dict], depth: int, weight, params: ActivationCommParams
) -> list[dict]:
    """Every method's answer to each item, with its token counts and FLOPs (item-major, methods in order).

    Items are batched per method: the baselines' prompts left-padded together; the last-token grafts (and
    silent) share each x_B's pass up to its last token; the all-token ablation grafts whole prompts."""
    dec, a, b = params.decoding, sender.shape, receiver.shape
    xs_a, xs_b = [item["x_a"] for item in items], [item["x_b"] for item in items]
    answers: dict[str, list[tuple]] = {}  # method -> per item (output, p_a, p_b, m, flops)
    if "skyline" in params.methods:
        outs = baselines.skyline_batch(receiver, xs_a, xs_b, dec.max_new_tokens, dec.top_p)
        answers["skyline"] = [skyline_row(b, ex) for ex in outs]
    if "natural_language" in params.methods:
        exchanges = baselines.natural_language_batch(
            sender, receiver, xs_a, xs_b, dec.max_new_tokens, dec.max_message_tokens, dec.top_p
        )
        answers["natural_language"] = [natural_language_row(a, b, ex) for ex in exchanges]
    answers.update(graft_answers(sender, receiver, items, depth, weight, params))
    rows = []
    for index, item in enumerate(items):
        for method in params.methods:
            out, p_a, p_b, m, flops = answers[method][index]
            rows.append(
                {
                    "game": item["game"],
                    "item": item["item"],
                    "method": method,
                    "output": out.text,
                    "correct": is_correct(out.text, item["answer"], item["candidates"]),
                    "p_a": p_a,
                    "p_b": p_b,
                    "m": m,
                    "t": out.passes,
                    "flops": flops,
                }
            )
    return rows


def skyline_row(b, exchange: baselines.Exchange) -> tuple:
    out = exchange.answer
    return out, 0, out.prompt_tokens, 0, single_flops(b, out.prompt_tokens, out.passes)


def natural_language_row(a, b, exchange: baselines.Exchange) -> tuple:
    message, out = exchange.message, exchange.answer
    m = message.passes
    flops = natural_language_flops(a, b, message.prompt_tokens, out.prompt_tokens - m, m, out.passes)
    return out, message.prompt_tokens, out.prompt_tokens - m, m, flops


def graft_answers(sender, receiver, items: list[dict], depth: int, weight, params) -> dict[str, list[tuple]]:
    """silent and every graft method's (output, p_a, p_b, m, flops) per item, A's stream computed once."""
    dec, a, b = params.decoding, sender.shape, receiver.shape
    ids_a = [sender.chat_ids(item["x_a"]) for item in items]
    ids_b = [receiver.chat_ids(item["x_b"]) for item in items]
    states = [residuals(sender, ids, depth) for ids in ids_a]
    shared = [
        method
        for method in params.methods
        if method == "silent" or (method in GRAFTS and not GRAFTS[method][2])
    ]
    whole = [method for method in params.methods if method in GRAFTS and GRAFTS[method][2]]
    outputs: dict[str, list] = {method: [] for method in shared + whole}
    if shared:
        row_prompt = [index for index in range(len(items)) for _ in shared]
        plans = [
            plan_of(method, states[index], depth, weight) for index in range(len(items)) for method in shared
        ]
        outs = graft_shared(receiver, ids_b, row_prompt, plans, dec.max_new_tokens, dec.top_p)
        for row, out in enumerate(outs):
            outputs[shared[row % len(shared)]].append(out)
    for method in whole:
        plans = [plan_of(method, state, depth, weight) for state in states]
        outputs[method] = graft_batch(receiver, ids_b, plans, dec.max_new_tokens, dec.top_p)
    answers = {}
    for method, outs in outputs.items():
        answers[method] = [
            graft_row(method, out, len(ids_a[index]), len(ids_b[index]), depth, a, b)
            for index, out in enumerate(outs)
        ]
    return answers


def graft_row(method: str, out, n_a: int, n_b: int, depth: int, a, b) -> tuple:
    """(output, p_a, p_b, m, flops) of silent or a graft method: FLOPs by Eq. 2 (Eq. 1 for silent)."""
    if method == "silent":
        return out, 0, n_b, 0, single_flops(b, n_b, out.passes)
    combination, mapped, all_tokens = GRAFTS[method]
    flops = activation_flops(a, b, n_a, n_b, out.passes, depth, combination, mapped)
    if all_tokens:
        flops += (min(n_a, n_b) - 1) * min(a.hidden, b.hidden)
    return out, n_a, n_b, 0, flops


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
    items = list(read_parquet(ctx.input("games")).filter(pl.col("split") == "test").iter_rows(named=True))
    chunks = item_chunks(items, len(params.methods), params.decoding.batch_rows)
    rows = []
    for chunk in progress(chunks, desc=f"test items in batches of ≤ {len(chunks[0])}", total=len(chunks)):
        rows += answer_items(sender, receiver, chunk, depth, weight, params)
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
