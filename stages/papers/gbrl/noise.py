"""Step `gbrl-noise`: the trained policies of `noise.task` evaluated under the input shift s + ε|s|,
ε ~ N(0, σ) one scalar per step, for every σ (the paper's Fig. 9 protocol), actions sampled."""

from __future__ import annotations

import polars as pl

from stages.core.context import StepContext
from stages.core.io import write_parquet
from stages.core.progress import progress
from stages.methods.rl.run import evaluate_policy
from stages.papers.gbrl.params import GBRLParams
from stages.papers.gbrl.runs import env_spec, fresh_model, model_stem, run_seed


def noise_rows(params: GBRLParams, models, base_seed: int) -> list[dict]:
    """Per policy × seed × σ × episode, the episode's return."""
    task, study = params.noise.task, params.noise
    rows = []
    for label in study.policies:
        policy = params.policy(task, label)
        for seed in progress(params.grid.seeds, desc=f"noise {label}"):
            model = fresh_model(params, task, label, seed, base_seed)
            model.load(models / model_stem(task, label, seed))
            for sigma in study.sigmas:
                eval_seed = run_seed(base_seed, task, seed) + 1_000_003  # paired: same for every policy
                spec = env_spec(params.tasks[task].env_id, policy).with_wrapper(
                    "input_noise", sigma=sigma, seed=eval_seed
                )
                returns = evaluate_policy(
                    spec, model, policy.encoder, study.episodes, study.n_envs, eval_seed
                )
                rows += [
                    {"task": task, "policy": label, "seed": seed, "sigma": sigma, "episode": i, "return": r}
                    for i, r in enumerate(returns)
                ]
    return rows


def run(ctx: StepContext) -> None:
    import torch

    torch.set_num_threads(1)
    params: GBRLParams = ctx.params
    frame = pl.DataFrame(noise_rows(params, ctx.input("models"), ctx.common.seed))
    summary = frame.group_by("policy", "sigma").agg(pl.col("return").mean()).sort("policy", "sigma")
    for row in summary.iter_rows(named=True):
        ctx.log(f"{row['policy']} σ={row['sigma']}: mean return {row['return']:.1f}")
    write_parquet(frame, ctx.output("noise"))
