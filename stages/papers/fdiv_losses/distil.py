"""Step `fdiv_losses-distil` (e): distil the CE teacher into a smaller student with ℓ_f(θ_s, p_teacher).

The teacher is each seed's CE-pretrained model; its softmax over the next character is the target y of the
student's Fenchel–Young loss (a distribution, not a label). Students of one seed share their initialisation
and batch order. Scored on the held-out text like pretraining (top-1 accuracy against the true next token,
support size of the student's f-softargmax, share of gold tokens with p = 0).
"""

from __future__ import annotations

import time

import polars as pl
import torch
from safetensors.torch import load_file

from stages.core.context import StepContext
from stages.core.io import write_json, write_parquet
from stages.core.progress import progress
from stages.core.seeding import derive_seed
from stages.papers.fdiv_losses.lm import (
    CharTransformer,
    held_out_windows,
    load_corpus,
    loss_module,
    random_windows,
    score,
    split_corpus,
    token_loss,
    train,
)
from stages.papers.fdiv_losses.params import FdivParams
from stages.papers.fdiv_losses.pretrain import build_lm
from stages.papers.fdiv_losses.threads import use_one_thread


def build_student(params: FdivParams, seed: int, common_seed: int) -> CharTransformer:
    """The smaller student, initialised from a seed shared by every loss."""
    torch.manual_seed(derive_seed(common_seed, "fdiv_losses", "student-init", seed))
    config = params.distil
    return CharTransformer(config.d_model, config.layers, config.heads, params.lm_config().context)


def distil_one(params: FdivParams, label: str, seed: int, common_seed: int, teacher, train_tokens):
    """Train one student on the teacher's next-token distributions."""
    student = build_student(params, seed, common_seed)
    criterion = loss_module(params.losses[label], params.reference, params.iterations)
    generator = torch.Generator().manual_seed(derive_seed(common_seed, "fdiv_losses", "distil-batches", seed))
    context = params.lm_config().context

    def objective(logits, inputs, _):
        with torch.no_grad():
            target = torch.softmax(teacher(inputs), dim=-1)
        return token_loss(criterion, logits, target)

    batch = lambda: random_windows(train_tokens, params.distil.batch_size, context, generator)  # noqa: E731
    train(student, params.distil.steps, params.distil.learning_rate, batch, objective)
    return student


def run(ctx: StepContext) -> None:
    """Distil each seed's CE teacher with every loss in `distil_losses`."""
    params: FdivParams = ctx.params
    use_one_thread()
    config = params.lm_config()
    tokens, _ = load_corpus(config.corpus_modules)
    train_tokens, held_out = split_corpus(tokens, config.held_out_fraction)
    eval_inputs, eval_targets = held_out_windows(held_out, config.eval_windows, config.context)
    teacher_spec = params.losses[params.baseline]
    rows, timings = [], []
    runs = [(label, seed) for seed in params.run_seeds() for label in params.distil_losses]
    for label, seed in progress(runs, desc="distil"):
        teacher = build_lm(params, seed, ctx.common.seed)
        teacher.load_state_dict(load_file(ctx.input("models") / f"{params.baseline}__{seed}.safetensors"))
        teacher.eval()
        started = time.perf_counter()
        student = distil_one(params, label, seed, ctx.common.seed, teacher, train_tokens)
        timings.append({"loss": label, "seed": seed, "seconds": round(time.perf_counter() - started, 3)})
        scores = score(
            student, eval_inputs, eval_targets, params.losses[label], params.reference, params.iterations
        )
        teacher_scores = score(
            teacher, eval_inputs, eval_targets, teacher_spec, params.reference, params.iterations
        )
        rows.append(
            {"loss": label, "seed": seed, "teacher_accuracy": teacher_scores.accuracy}
            | {key: value for key, value in vars(scores).items() if key != "perplexity"}
        )
        ctx.log(
            f"{label} seed {seed}: student acc {scores.accuracy:.4f} (teacher {teacher_scores.accuracy:.4f})"
        )
    write_parquet(pl.DataFrame(rows).sort(["loss", "seed"]), ctx.output("distil_results"))
    write_json({"distil_seconds": timings}, ctx.output("timings"))
