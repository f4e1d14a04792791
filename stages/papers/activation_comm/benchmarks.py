"""Activation-communication benchmark (`icml25 bench activation_comm`): wall time and analytic FLOPs per answered
item, activation communication (f = replace at k = j = 26) vs natural-language communication, SmolLM2-135M as
A and B, on the first items of both games' test split.

Both methods answer the same items; the two are timed interleaved in a seeded random order (one thread, warm-up
excluded), median of `repeats`, and reported as the ratio AC / NL. Writes reports/benchmarks/activation_comm.json.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from stages.core.io import write_json
from stages.core.timing import interleaved_seconds
from stages.methods.communication import baselines
from stages.methods.communication.compute import activation_flops, natural_language_flops
from stages.methods.communication.graft import Graft, graft_generate
from stages.models.lm.config import LMConfig
from stages.papers.activation_comm.games import generate_games

RESULTS_DIR = Path("reports/benchmarks")


def per_item_costs(lm, items: list[dict], depth: int, max_new: int, max_message: int, repeats: int) -> dict:
    graft = Graft(depth, depth, "replace")
    flops: dict[str, list[float]] = {"activation": [], "natural_language": []}

    def activation() -> None:
        for item in items:
            ids_a, ids_b = lm.chat_ids(item["x_a"]), lm.chat_ids(item["x_b"])
            out = graft_generate(lm, lm, ids_a, ids_b, graft, max_new)
            flops["activation"].append(
                activation_flops(lm.shape, lm.shape, len(ids_a), len(ids_b), out.passes, depth, "replace")
            )

    def natural_language() -> None:
        for item in items:
            ex = baselines.natural_language(lm, lm, item["x_a"], item["x_b"], max_new, max_message)
            m = ex.message.passes
            flops["natural_language"].append(
                natural_language_flops(
                    lm.shape,
                    lm.shape,
                    ex.message.prompt_tokens,
                    ex.answer.prompt_tokens - m,
                    m,
                    ex.answer.passes,
                )
            )

    seconds = interleaved_seconds({"activation": activation, "natural_language": natural_language}, repeats)
    per_item = {name: float(np.median(values)) / len(items) for name, values in seconds.items()}
    mean_flops = {name: float(np.mean(values)) for name, values in flops.items()}
    return {
        "seconds_per_item": per_item,
        "flops_per_item": mean_flops,
        "ratio_activation_to_nl": {
            "seconds": per_item["activation"] / per_item["natural_language"],
            "flops": mean_flops["activation"] / mean_flops["natural_language"],
        },
    }


def run_benchmarks(items_per_game: int = 5, repeats: int = 3, depth: int = 26) -> dict:
    """AC vs NL seconds and FLOPs per answered item on SmolLM2-135M (one thread)."""
    from stages.models.lm.loading import load_lm

    lm = load_lm(LMConfig(source="smollm2", threads=1))
    games = generate_games(0, {"test": items_per_game})
    result = {
        "model": lm.name,
        "threads": 1,
        "items": games.height,
        "repeats": repeats,
        "k_j": depth,
        **per_item_costs(lm, games.to_dicts(), depth, 8, 16, repeats),
    }
    write_json(result, RESULTS_DIR / "activation_comm.json")
    return result
