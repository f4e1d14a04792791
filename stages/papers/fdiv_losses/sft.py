"""Step `fdiv_losses-sft` (d): fine-tune the CE-pretrained char LM on `aa+bb=ccc` strings with each loss.

Every (a, b) with 0 ≤ a, b ≤ max_operand is written `aa+bb=ccc\\n` (zero-padded, so every prompt has 6
characters and every answer 4); a fixed split (common seed) holds `test_size` pairs out. The loss is on the
answer tokens only (the prompt's targets are `ignore_index`). Each seed starts from that seed's CE model, so
losses are paired. Greedy decoding of 4 characters; exact match = the whole answer right.
"""

from __future__ import annotations

import time

import numpy as np
import polars as pl
import torch
from safetensors.torch import load_file

from stages.core.context import StepContext
from stages.core.io import write_json, write_parquet
from stages.core.progress import progress
from stages.core.seeding import derive_seed
from stages.papers.fdiv_losses.lm import decode, encode, loss_module, token_loss, train
from stages.papers.fdiv_losses.params import FdivParams
from stages.papers.fdiv_losses.pretrain import build_lm
from stages.papers.fdiv_losses.threads import use_one_thread

PROMPT = 6
ANSWER = 4
IGNORE = -100


def arithmetic_strings(max_operand: int) -> list[str]:
    """`aa+bb=ccc\\n` for every pair of operands."""
    return [f"{a:02d}+{b:02d}={a + b:03d}\n" for a in range(max_operand + 1) for b in range(max_operand + 1)]


def split_strings(strings: list[str], test_size: int, seed: int) -> tuple[list[str], list[str]]:
    """A fixed random split: `test_size` held out."""
    if test_size >= len(strings):
        raise ValueError(f"sft.test_size ({test_size}) must be below the {len(strings)} arithmetic strings")
    order = np.random.default_rng(seed).permutation(len(strings))
    return [strings[i] for i in order[test_size:]], [strings[i] for i in order[:test_size]]


def sequences(strings: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs (all but the last char) and targets with the prompt's positions ignored."""
    tokens = torch.from_numpy(np.stack([encode(text) for text in strings]))
    inputs, targets = tokens[:, :-1], tokens[:, 1:].clone()
    targets[:, : PROMPT - 1] = IGNORE
    return inputs, targets


@torch.no_grad()
def exact_match(model, strings: list[str]) -> float:
    """Share of held-out prompts whose greedy 4-character continuation is the answer."""
    model.eval()
    tokens = torch.from_numpy(np.stack([encode(text[:PROMPT]) for text in strings]))
    for _ in range(ANSWER):
        tokens = torch.cat([tokens, model(tokens)[:, -1].argmax(-1, keepdim=True)], dim=1)
    answers = [decode(row[PROMPT:].tolist()) for row in tokens]
    return float(np.mean([answer == text[PROMPT:] for answer, text in zip(answers, strings, strict=True)]))


def finetune(
    params: FdivParams, label: str, seed: int, common_seed: int, state, train_strings
) -> torch.nn.Module:
    """One SFT run from the CE-pretrained weights `state`."""
    model = build_lm(params, seed, common_seed)
    model.load_state_dict(state)
    criterion = loss_module(params.losses[label], params.reference, params.iterations, ignore_index=IGNORE)
    inputs, targets = sequences(train_strings)
    generator = torch.Generator().manual_seed(derive_seed(common_seed, "fdiv_losses", "sft-batches", seed))

    def batch():
        rows = torch.randint(0, len(inputs), (params.sft.batch_size,), generator=generator)
        return inputs[rows], targets[rows]

    objective = lambda logits, _, y: token_loss(criterion, logits, y)  # noqa: E731
    train(model, params.sft.steps, params.sft.learning_rate, batch, objective)
    return model


def run(ctx: StepContext) -> None:
    """SFT every (loss, seed) from that seed's CE model; greedy exact match on held-out pairs."""
    params: FdivParams = ctx.params
    use_one_thread()
    train_strings, test_strings = split_strings(
        arithmetic_strings(params.sft.max_operand),
        params.sft.test_size,
        derive_seed(ctx.common.seed, "fdiv_losses", "sft-split"),
    )
    rows, timings = [], []
    runs = [(label, seed) for seed in params.run_seeds() for label in params.sft_losses]
    for label, seed in progress(runs, desc="sft"):
        state = load_file(ctx.input("models") / f"{params.baseline}__{seed}.safetensors")
        before = build_lm(params, seed, ctx.common.seed)
        before.load_state_dict(state)
        started = time.perf_counter()
        model = finetune(params, label, seed, ctx.common.seed, state, train_strings)
        timings.append({"loss": label, "seed": seed, "seconds": round(time.perf_counter() - started, 3)})
        score = exact_match(model, test_strings)
        rows.append(
            {
                "loss": label,
                "seed": seed,
                "exact_match": score,
                "before_sft": exact_match(before, test_strings),
            }
        )
        ctx.log(f"{label} seed {seed}: exact match {score:.3f}")
    write_parquet(pl.DataFrame(rows).sort(["loss", "seed"]), ctx.output("sft_results"))
    write_json({"sft_seconds": timings}, ctx.output("timings"))
