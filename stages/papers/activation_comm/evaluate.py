"""Step `activation_comm-evaluate`: pick k = j from the dev sweep (mean gold log-probability over both games),
train AC(W)'s map there on the corpus to a held-out error, then answer every test item with every method,
recording the output, the option it chooses and whether that is right, B's log-probability of the gold answer,
the token counts P_A, P_B, M, T and the item's analytic FLOPs (Eq. 1–2); and a sample of A's natural-language
messages (`nl_messages.md`)."""

from __future__ import annotations

import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_json, write_parquet
from stages.core.progress import progress
from stages.methods.communication import baselines
from stages.methods.communication.compute import activation_flops, natural_language_flops, single_flops
from stages.methods.communication.graft import Graft, graft_batch_scored, graft_shared_scored
from stages.methods.communication.learned_map import (
    MapFit,
    MapTraining,
    final_token_activations,
    train_map_until,
)
from stages.models.lm.hooks import residuals
from stages.papers.activation_comm.games import chosen_option, is_correct
from stages.papers.activation_comm.models import load_agents
from stages.papers.activation_comm.params import ActivationCommParams

GRAFTS = {  # method: (f, mapped, all tokens)
    "sum": ("sum", False, False),
    "mean": ("mean", False, False),
    "replace": ("replace", False, False),
    "ac_w": ("replace", True, False),
    "all_tokens_replace": ("replace", False, True),
    "all_tokens_sum": ("sum", False, True),
}
NL_SAMPLE = 5  # natural-language messages per game written to nl_messages.md


def best_depth(sweep: pl.DataFrame) -> int:
    """The k = j with the highest mean gold log-probability over both games' dev items (ties: shallower)."""
    if "split" in sweep.columns:
        sweep = sweep.filter(pl.col("split") == "dev")
    means = sweep.group_by("depth").agg(pl.col("logprob").mean()).sort("depth")
    return int(means.sort(["logprob", "depth"], descending=[True, False])["depth"][0])


def learn_map(sender, receiver, sentences: list[str], depth: int, params: ActivationCommParams) -> MapFit:
    """W from A's to B's layer-`depth` final-token activations, trained on all but the last held-out share of
    the sentences until its held-out relative error reaches the target (or the epoch limit)."""
    source = final_token_activations(sender, sentences, depth)
    target = source if receiver is sender else final_token_activations(receiver, sentences, depth)
    cut = len(sentences) - max(1, round(params.map.heldout_fraction * len(sentences)))
    training = MapTraining(params.map.max_epochs, params.map.batch_size, params.map.learning_rate)
    return train_map_until(
        source[:cut], target[:cut], source[cut:], target[cut:], training, params.map.target_error
    )


def item_chunks(items: list[dict], rows_per_item: int, batch_rows: int) -> list[list[dict]]:
    """Consecutive runs of items whose rows (items × methods) fit one batch of `batch_rows`."""
    size = max(1, batch_rows // max(1, rows_per_item))
    return [items[start : start + size] for start in range(0, len(items), size)]


def answer_items(
    sender, receiver, items: list[dict], depth: int, weight, params: ActivationCommParams
) -> list[dict]:
    """Every method's answer to each item, its gold log-probability, token counts and FLOPs (item-major,
    methods in order).

    Items are batched per method: the baselines' prompts left-padded together; the last-token grafts (and
    silent) share each x_B's pass up to its last token; the all-token ablations graft whole prompts."""
    dec, a, b = params.decoding, sender.shape, receiver.shape
    xs_a, xs_b = [item["x_a"] for item in items], [item["x_b"] for item in items]
    golds = [receiver.tokenizer.encode(item["answer"]) for item in items]
    answers: dict[str, list[tuple]] = {}  # method -> per item (output, p_a, p_b, m, flops, logprob, message)
    if "skyline" in params.methods:
        outs = baselines.skyline_batch(receiver, xs_a, xs_b, dec.max_new_tokens, dec.top_p, golds=golds)
        answers["skyline"] = [(*skyline_row(b, ex), ex.logprob, None) for ex in outs]
    if "natural_language" in params.methods:
        exchanges = baselines.natural_language_batch(
            sender, receiver, xs_a, xs_b, dec.max_new_tokens, dec.max_message_tokens, dec.top_p, golds=golds
        )
        answers["natural_language"] = [
            (*natural_language_row(a, b, ex), ex.logprob, ex.message.text) for ex in exchanges
        ]
    answers.update(graft_answers(sender, receiver, items, depth, weight, params))
    return [
        method_row(item, method, *answers[method][index])
        for index, item in enumerate(items)
        for method in params.methods
    ]


def method_row(item: dict, method: str, out, p_a, p_b, m, flops, logprob, message) -> dict:
    """One (item, method) row of results.parquet."""
    return {
        "game": item["game"],
        "item": item["item"],
        "method": method,
        "output": out.text,
        "chosen": chosen_option(out.text, item["candidates"]),
        "correct": is_correct(out.text, item["answer"], item["candidates"]),
        "logprob": logprob,
        "message": message,
        "p_a": p_a,
        "p_b": p_b,
        "m": m,
        "t": out.passes,
        "flops": flops,
    }


def skyline_row(b, exchange: baselines.Exchange) -> tuple:
    out = exchange.answer
    return out, 0, out.prompt_tokens, 0, single_flops(b, out.prompt_tokens, out.passes)


def natural_language_row(a, b, exchange: baselines.Exchange) -> tuple:
    message, out = exchange.message, exchange.answer
    m = message.passes
    flops = natural_language_flops(a, b, message.prompt_tokens, out.prompt_tokens - m, m, out.passes)
    return out, message.prompt_tokens, out.prompt_tokens - m, m, flops


def graft_answers(sender, receiver, items: list[dict], depth: int, weight, params) -> dict[str, list[tuple]]:
    """silent and every graft method's (output, p_a, p_b, m, flops, logprob, None) per item, A's stream
    computed once."""
    dec, a, b = params.decoding, sender.shape, receiver.shape
    ids_a = [sender.chat_ids(item["x_a"]) for item in items]
    ids_b = [receiver.chat_ids(item["x_b"]) for item in items]
    golds = [receiver.tokenizer.encode(item["answer"]) for item in items]
    states = [residuals(sender, ids, depth) for ids in ids_a]
    shared = [m for m in params.methods if m == "silent" or (m in GRAFTS and not GRAFTS[m][2])]
    whole = [m for m in params.methods if m in GRAFTS and GRAFTS[m][2]]
    outputs: dict[str, list] = {method: [] for method in shared + whole}
    logprobs: dict[str, list[float]] = {method: [] for method in shared + whole}
    if shared:
        row_prompt = [index for index in range(len(items)) for _ in shared]
        plans = [plan_of(method, states[i], depth, weight) for i in range(len(items)) for method in shared]
        outs, scores = graft_shared_scored(
            receiver, ids_b, row_prompt, golds, plans, dec.max_new_tokens, dec.top_p
        )
        for row, (out, score) in enumerate(zip(outs, scores, strict=True)):
            outputs[shared[row % len(shared)]].append(out)
            logprobs[shared[row % len(shared)]].append(score)
    for method in whole:
        plans = [plan_of(method, state, depth, weight) for state in states]
        outputs[method], logprobs[method] = graft_batch_scored(
            receiver, ids_b, golds, plans, dec.max_new_tokens, dec.top_p
        )
    return {
        method: [
            (*graft_row(method, out, len(ids_a[i]), len(ids_b[i]), depth, a, b), logprobs[method][i], None)
            for i, out in enumerate(outs)
        ]
        for method, outs in outputs.items()
    }


def graft_row(method: str, out, n_a: int, n_b: int, depth: int, a, b) -> tuple:
    """(output, p_a, p_b, m, flops) of silent or a graft method: FLOPs by Eq. 2 (Eq. 1 for silent)."""
    if method == "silent":
        return out, 0, n_b, 0, single_flops(b, n_b, out.passes)
    combination, mapped, all_tokens = GRAFTS[method]
    flops = activation_flops(a, b, n_a, n_b, out.passes, depth, combination, mapped)
    if all_tokens:
        own = {"replace": 0, "sum": 1, "mean": 2}[combination]
        flops += (min(n_a, n_b) - 1) * own * min(a.hidden, b.hidden)
    return out, n_a, n_b, 0, flops


def plan_of(method: str, states, depth: int, weight):
    """The graft of a method (None for silent) with A's stream, mapped by W for AC(W)."""
    if method == "silent":
        return None
    combination, mapped, all_tokens = GRAFTS[method]
    graft = Graft(depth, depth, combination, weight if mapped else None, all_tokens)
    return graft, (states @ weight.T if mapped else states)


def nl_sample_markdown(results: pl.DataFrame, games: pl.DataFrame, per_game: int) -> str:
    """The first `per_game` test items per game: A's message, B's answer, the option it chose and the gold."""
    lines = [
        "# Natural-language messages (sample)",
        "",
        f"The first {per_game} test items of each game: A's message (greedy, written from x_A), B's answer with",
        "the message before x_B, the option that answer chooses, and the gold answer. Generated by",
        "`activation_comm-evaluate`.",
        "",
        "| game | item | A's message | B's answer | chosen | gold |",
        "|---|---|---|---|---|---|",
    ]
    gold = {(g, i): a for g, i, a in zip(games["game"], games["item"], games["answer"], strict=True)}
    rows = results.filter(pl.col("method") == "natural_language").sort("game", "item")
    for game in rows["game"].unique(maintain_order=True):
        for row in rows.filter(pl.col("game") == game).head(per_game).iter_rows(named=True):
            cells = [game, str(row["item"]), row["message"], row["output"], row["chosen"] or "—"]
            cells.append(gold[(game, row["item"])])
            lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def run(ctx: StepContext) -> None:
    params: ActivationCommParams = ctx.params
    sender, receiver = load_agents(params)
    depth = best_depth(read_parquet(ctx.input("sweep")))
    sentences = read_parquet(ctx.input("sentences"))["text"].to_list()
    fit = learn_map(sender, receiver, sentences, depth, params)
    ctx.log(
        f"k = j = {depth}; AC(W) trained {fit.epochs} epochs, held-out relative error "
        f"{fit.heldout_error[-1]:.4f} (target {params.map.target_error})"
    )
    games = read_parquet(ctx.input("games")).filter(pl.col("split") == "test")
    items = list(games.iter_rows(named=True))
    chunks = item_chunks(items, len(params.methods), params.decoding.batch_rows)
    rows = []
    for chunk in progress(chunks, desc=f"test items in batches of ≤ {len(chunks[0])}", total=len(chunks)):
        rows += answer_items(sender, receiver, chunk, depth, fit.weight, params)
    results = pl.DataFrame(rows, infer_schema_length=None)
    write_parquet(results, ctx.output("results"))
    if "natural_language" in params.methods:
        ctx.output("nl_messages").write_text(nl_sample_markdown(results, games, NL_SAMPLE))
    write_json(
        {
            "depth": depth,
            "layers": sender.n_layers,
            "map": {
                "epochs": fit.epochs,
                "max_epochs": params.map.max_epochs,
                "target_heldout_error": params.map.target_error,
                "reached": fit.heldout_error[-1] <= params.map.target_error,
                "heldout_relative_error_by_epoch": [round(x, 6) for x in fit.heldout_error],
                "train_mse_by_epoch": [round(x, 6) for x in fit.train_mse],
                "train_sentences": len(sentences) - round(params.map.heldout_fraction * len(sentences)),
                "heldout_sentences": round(params.map.heldout_fraction * len(sentences)),
            },
            "sentences": len(sentences),
            "sender": sender.name,
            "receiver": receiver.name,
        },
        ctx.output("setup"),
    )
