"""Step `fdiv_losses-pretrain` (c): a char-level causal transformer per loss × seed on Python stdlib sources.

Each seed's models share their initialisation and batch order, so losses are compared on paired runs. Scored
on held-out text: top-1 accuracy, mean support size of the loss's f-softargmax, share of gold tokens given
p = 0, and perplexity for the dense KL model only. The support size on a fixed training batch is logged
during training.
"""

from __future__ import annotations

import time

import polars as pl
import torch
from safetensors.torch import save_file

from stages.core.context import StepContext
from stages.core.io import write_json, write_parquet
from stages.core.metrics import new_figure, save_figure
from stages.core.progress import progress
from stages.core.seeding import derive_seed
from stages.papers.fdiv_losses.lm import (
    CharTransformer,
    held_out_windows,
    load_corpus,
    loss_module,
    mean_support,
    random_windows,
    score,
    split_corpus,
    token_loss,
    train,
)
from stages.papers.fdiv_losses.params import FdivParams
from stages.papers.fdiv_losses.threads import use_one_thread


def build_lm(params: FdivParams, seed: int, common_seed: int) -> CharTransformer:
    """The pretraining architecture, initialised from a seed shared by every loss."""
    config = params.lm_config()
    torch.manual_seed(derive_seed(common_seed, "fdiv_losses", "lm-init", seed))
    return CharTransformer(config.d_model, config.layers, config.heads, config.context)


def pretrain_one(params: FdivParams, label: str, seed: int, common_seed: int, train_tokens, probe) -> tuple:
    """Train one model; returns it, its last loss and its support-size curve."""
    config, spec = params.lm_config(), params.losses[label]
    model = build_lm(params, seed, common_seed)
    criterion = loss_module(spec, params.reference, params.iterations)
    generator = torch.Generator().manual_seed(derive_seed(common_seed, "fdiv_losses", "lm-batches", seed))
    curve: list[dict] = []

    def log(step: int) -> None:
        support = mean_support(model, probe, spec, params.reference, params.iterations)
        curve.append({"loss": label, "seed": seed, "step": step, "support": support})

    last = train(
        model,
        config.steps,
        config.learning_rate,
        lambda: random_windows(train_tokens, config.batch_size, config.context, generator),
        lambda logits, _, targets: token_loss(criterion, logits, targets),
        on_log=log,
        log_every=config.log_every,
    )
    return model, last, curve


def plot_support(curves: pl.DataFrame, path) -> None:
    """Mean support size (over seeds) against training step, one line per loss."""
    figure, axes = new_figure()
    summary = curves.group_by(["loss", "step"]).agg(pl.col("support").mean()).sort(["loss", "step"])
    for label in summary["loss"].unique().sort():
        rows = summary.filter(pl.col("loss") == label)
        axes.plot(rows["step"], rows["support"], marker=".", label=label)
    axes.set_yscale("log")
    axes.set_xlabel("training step")
    axes.set_ylabel("mean support size (tokens with p > 0)")
    axes.set_title("char LM: support of the f-softargmax during pretraining")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    save_figure(figure, path)


def run(ctx: StepContext) -> None:
    """Pretrain every (loss, seed), score on held-out text, save the models."""
    params: FdivParams = ctx.params
    use_one_thread()
    config = params.lm_config()
    tokens, digests = load_corpus(config.corpus_modules)
    train_tokens, held_out = split_corpus(tokens, config.held_out_fraction)
    ctx.log(f"corpus {len(tokens):,} chars ({len(train_tokens):,} train, {len(held_out):,} held-out)")
    eval_inputs, eval_targets = held_out_windows(held_out, config.eval_windows, config.context)
    probe, _ = random_windows(train_tokens, 8, config.context, torch.Generator().manual_seed(0))
    models_dir = ctx.output("models")
    models_dir.mkdir()
    rows, curves, timings = [], [], []
    runs = [(label, seed) for seed in params.run_seeds() for label in params.lm_losses]
    for label, seed in progress(runs, desc="pretrain"):
        started = time.perf_counter()
        model, last, curve = pretrain_one(params, label, seed, ctx.common.seed, train_tokens, probe)
        timings.append({"loss": label, "seed": seed, "seconds": round(time.perf_counter() - started, 3)})
        spec = params.losses[label]
        scores = score(model, eval_inputs, eval_targets, spec, params.reference, params.iterations)
        rows.append({"loss": label, "seed": seed, "train_loss": last} | vars(scores))
        curves.extend(curve)
        save_file(model.state_dict(), models_dir / f"{label}__{seed}.safetensors")
        ctx.log(f"{label} seed {seed}: acc {scores.accuracy:.4f} support {scores.support:.1f}")
    results = pl.DataFrame(rows, schema_overrides={"perplexity": pl.Float64})
    write_parquet(results.sort(["loss", "seed"]), ctx.output("results"))
    write_parquet(pl.DataFrame(curves).sort(["loss", "seed", "step"]), ctx.output("curves"))
    write_json(
        {
            "corpus_md5": digests,
            "chars": len(tokens),
            "held_out_tokens": int(eval_targets.numel()),
            "reference": params.reference,
            "iterations": params.iterations,
            "config": config.model_dump(),
        },
        ctx.output("corpus"),
    )
    write_json({"pretrain_seconds": timings}, ctx.output("timings"))
    plot_support(pl.DataFrame(curves), ctx.output("support_figure"))
