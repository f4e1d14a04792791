"""Step `bdc-run`: per seed, the clean model (the small LM pretrained on the world text and MC drills on drill
facts; or SmolLM2-135M as it ships), its copies contaminated with each benchmark by both recipes, and every
model scored on every version of its benchmark and on the utility questions (the official MC scoring).

`correctness.parquet`: one row per (seed, benchmark, model, version, question) with the 0/1 correctness, the
predicted label and the key's mean log-probability. `training.json`: losses per epoch and model sizes.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_json, write_parquet
from stages.core.seeding import derive_seed, pin_threads
from stages.methods.contamination import lm
from stages.methods.contamination.items import MCItem, from_rows
from stages.methods.contamination.scoring import mc_prompt, score_items
from stages.papers.bdc import world as W
from stages.papers.bdc.params import FORMATS, BDCParams, PretrainParams, Recipe

MODELS = ("clean", "intensive", "mild")


def format_examples(
    tokenizer: Any, items: Sequence[MCItem], formats: Sequence[str] = FORMATS
) -> list[lm.Example]:
    """Each item in the scoring format (target: the label) and/or the fine-tuning format (target: " label")."""
    examples = []
    if "scoring" in formats:
        examples += [lm.example(tokenizer, mc_prompt(item), item.answer) for item in items]
    if "finetune" in formats:
        examples += [lm.example(tokenizer, W.contamination_prompt(item), " " + item.answer) for item in items]
    return examples


def pretraining_text(facts: list[dict], params: BDCParams) -> list[str]:
    world = W.world_from_rows(facts)
    return W.world_text(world) + W.arithmetic_text(params.grid.world.arithmetic_top)


def fit_tokenizer(text: list[str], facts: list[dict], benchmark: Sequence[MCItem]) -> lm.WordTokenizer:
    drills = W.drills(facts, 0)
    prompts = [mc_prompt(item) for item in [*drills, *benchmark]]
    prompts += [W.contamination_prompt(item) for item in [*drills, *benchmark]]
    return lm.WordTokenizer.fit([*text, *prompts])


def pretraining(
    tokenizer: lm.WordTokenizer, text: list[str], facts: list[dict], spec: PretrainParams, seed: int
) -> Callable[[int], list[lm.Example]]:
    """Examples of one epoch: every world sentence (loss on all of it) and the drills with fresh distractors."""
    sentences = [lm.example(tokenizer, "", sentence) for sentence in text]

    def epoch(index: int) -> list[lm.Example]:
        drilled = []
        for repeat in range(spec.drill_repeats):
            drilled += format_examples(tokenizer, W.drills(facts, derive_seed(seed, "drills", index, repeat)))
        return sentences + drilled

    return epoch


def contamination_set(
    tokenizer: Any, benchmark: Sequence[MCItem], other: list[lm.Example], recipe: Recipe, seed: int
) -> list[lm.Example]:
    """The benchmark in the recipe's formats × repeat, mixed with `recipe.other` non-benchmark examples."""
    tuned = format_examples(tokenizer, benchmark, recipe.formats)
    rng = random.Random(seed)
    mixed = rng.sample(other, min(recipe.other, len(other))) if recipe.other else []
    return tuned * recipe.repeat + mixed


def clean_model(params: BDCParams, tokenizer: Any, examples, seed: int, log: dict) -> Any:
    spec = params.grid.model.pretrain
    shape = lm.LMShape(spec.hidden, spec.layers, spec.heads, spec.intermediate)
    model = lm.build_lm(tokenizer.vocab_size, shape, derive_seed(seed, "bdc", "init"))
    settings = lm.TrainSettings(epochs=spec.epochs, batch=spec.batch, lr=spec.lr)
    log["pretrain_loss"] = [
        round(x, 4) for x in lm.train(model, examples, settings, seed, f"pretrain seed {seed}")
    ]
    log["parameters"] = sum(p.numel() for p in model.parameters())
    return model


def smollm2() -> tuple[Any, Any]:
    from stages.models.lm.loading import load_gguf, smollm2_path

    loaded = load_gguf(smollm2_path(), "SmolLM2-135M-Instruct")
    return loaded.model, loaded.tokenizer


def rows_for(scores, items: Sequence[MCItem], key: dict) -> list[dict]:
    return [
        key
        | {
            "id": item.id,
            "correct": int(correct),
            "predicted": predicted,
            "answer_logprob": round(logprobs[item.labels.index(item.answer)], 5),
        }
        for item, correct, predicted, logprobs in zip(
            items, scores.correct, scores.predicted, scores.label_logprobs, strict=True
        )
    ]


def run_seed(params: BDCParams, items: pl.DataFrame, facts: list[dict], seed: int, ctx: StepContext):
    """Train, contaminate and score for one seed; returns correctness rows and the training log."""
    tables = {
        (b, v): from_rows(
            items.filter(
                (pl.col("benchmark") == b) & (pl.col("seed") == seed) & (pl.col("version") == v)
            ).to_dicts()
        )
        for b, v in items.filter(pl.col("seed") == seed).select("benchmark", "version").unique().iter_rows()
    }
    originals = [item for b in params.benchmarks for item in tables[(b, "vanilla")]]
    log: dict[str, Any] = {}
    if params.grid.model.source == "tiny":
        text = pretraining_text(facts, params)
        tokenizer = fit_tokenizer(text, facts, originals)
        epochs = pretraining(tokenizer, text, facts, params.grid.model.pretrain, seed)
        clean = clean_model(params, tokenizer, epochs, seed, log)
        other = epochs(10_000)
        log["vocabulary"] = tokenizer.vocab_size
    else:
        clean, tokenizer = smollm2()
        other = [lm.example(tokenizer, "", s) for s in pretraining_text(facts, params)]
    rows = []
    batch = params.grid.model.score_batch
    pad = getattr(tokenizer, "pad_id", 0) or 0
    for benchmark in params.benchmarks:
        models = {"clean": clean}
        for name in ("intensive", "mild"):
            recipe: Recipe = getattr(params.grid.model, name)
            model = copy.deepcopy(clean)
            data = contamination_set(
                tokenizer,
                tables[(benchmark, "vanilla")],
                other,
                recipe,
                derive_seed(seed, "bdc", benchmark, name),
            )
            settings = lm.TrainSettings(epochs=recipe.epochs, batch=recipe.batch, lr=recipe.lr)
            losses = lm.train(
                model,
                data,
                settings,
                derive_seed(seed, "bdc", "order", benchmark, name),
                f"{name} {benchmark} seed {seed}",
            )
            log[f"{benchmark}/{name}_loss"] = [round(x, 4) for x in losses]
            models[name] = model
        versions = ["vanilla", *params.strategies, "utility"]
        for model_name, model in models.items():
            for version in versions:
                version_items = tables[(benchmark, version)]
                scores = score_items(model, tokenizer.encode, version_items, batch, pad_id=pad)
                key = {"seed": seed, "benchmark": benchmark, "model": model_name, "version": version}
                rows += rows_for(scores, version_items, key)
        ctx.log(f"seed {seed} {benchmark}: scored {len(models)} models × {len(versions)} versions")
    return rows, log


def run(ctx: StepContext) -> None:
    params: BDCParams = ctx.params
    pin_threads(ctx.common.threads)
    items = read_parquet(ctx.input("items"))
    facts = read_parquet(ctx.input("world")).to_dicts()
    rows, logs = [], {}
    for seed in params.grid.seeds:
        seed_rows, logs[str(seed)] = run_seed(params, items, facts, seed, ctx)
        rows += seed_rows
    frame = pl.DataFrame(rows).sort("benchmark", "seed", "model", "version", "id")
    write_parquet(frame, ctx.output("correctness"))
    write_json({"source": params.grid.model.source, "seeds": logs}, ctx.output("training"))
