"""Step `gbrl-claims`: the card's claims about returns, robustness and model size, three-way verdicts over
seeds (the claims about time, `update_cost` and `shared_update_time`, are judged by `gbrl-timing`).

- `minigrid_vs_nn`: on the MiniGrid task, GBRL's score − the network's (paired by seed) wholly above −margin;
- `cartpole_parity`: on CartPole, GBRL's score / the network's (per seed) wholly above 0.9 (within 10%);
- `noise_robustness`: the drop in mean return from σ = 0 to σ = 0.2, GBRL's − the network's (paired) wholly
  below 0 (GBRL loses less);
- `shared_tree`: shared/separate trees (per seed) wholly below 0.6, and shared − separate score wholly above
  −margin (the score kept within the seed spread).
The score of a run is the mean return of its last 100 training episodes (the paper's).
"""

from __future__ import annotations

import polars as pl

from stages.core.claims import Claim, compare, compare_paired, verdict_claim, write_claims
from stages.core.context import StepContext
from stages.core.headline import write_headline
from stages.core.io import read_parquet
from stages.papers.gbrl.params import GBRLParams


def per_seed(frame: pl.DataFrame, task: str, policy: str, column: str = "score") -> dict[str, float]:
    rows = frame.filter((pl.col("task") == task) & (pl.col("policy") == policy)).sort("seed")
    return {str(seed): float(value) for seed, value in zip(rows["seed"], rows[column], strict=True)}


def minigrid_claim(runs: pl.DataFrame, params: GBRLParams) -> Claim:
    c = params.claims
    task = c.minigrid_task
    gbrl, nn = per_seed(runs, task, c.minigrid_gbrl), per_seed(runs, task, "nn")
    return verdict_claim(
        id="minigrid_vs_nn",
        statement="On MiniGrid, GBRL matches or beats the neural network at equal environment steps "
        "(GoToDoor .96 vs .60, DoorKey .96 vs .78 in the paper).",
        measured={"task": task, "env_steps": params.grid.steps[task], "gbrl": gbrl, "nn": nn},
        criterion=f"t interval over seeds of {c.minigrid_gbrl} − nn score (mean return of the last 100 training "
        f"episodes, paired by seed) wholly above −{c.minigrid_margin}",
        evidence=[
            compare_paired(
                f"{c.minigrid_gbrl} − nn score on {task}", gbrl, nn, -c.minigrid_margin, "above", c.confidence
            )
        ],
    )


def cartpole_claim(runs: pl.DataFrame, params: GBRLParams) -> Claim:
    c = params.claims
    gbrl, nn = per_seed(runs, "cartpole", "gbrl"), per_seed(runs, "cartpole", "nn")
    ratios = {seed: gbrl[seed] / nn[seed] for seed in gbrl}
    return verdict_claim(
        id="cartpole_parity",
        statement="On CartPole GBRL reaches the network's return (500 vs 500 in the paper).",
        measured={"env_steps": params.grid.steps["cartpole"], "gbrl": gbrl, "nn": nn},
        criterion=f"t interval over seeds of the per-seed score ratio gbrl/nn wholly above {c.cartpole_ratio}",
        evidence=[compare("gbrl / nn score on cartpole", ratios, c.cartpole_ratio, "above", c.confidence)],
    )


def drops(noise: pl.DataFrame, policy: str, sigma: float) -> dict[str, float]:
    """Per seed, mean return at σ = 0 minus mean return at `sigma`."""
    means = noise.filter(pl.col("policy") == policy).group_by("seed", "sigma").agg(pl.col("return").mean())
    out = {}
    for seed in sorted(means["seed"].unique()):
        rows = means.filter(pl.col("seed") == seed)
        clean = rows.filter(pl.col("sigma") == 0.0)["return"][0]
        out[str(seed)] = float(clean - rows.filter(pl.col("sigma") == sigma)["return"][0])
    return out


def noise_claim(noise: pl.DataFrame, params: GBRLParams) -> Claim:
    c, study = params.claims, params.noise
    gbrl_label = "gbrl" if study.task == "cartpole" else c.minigrid_gbrl
    gbrl, nn = drops(noise, gbrl_label, c.noise_sigma), drops(noise, "nn", c.noise_sigma)
    return verdict_claim(
        id="noise_robustness",
        statement="GBRL loses less return than the network when its inputs are shifted by noise (Fig. 9).",
        measured={
            "task": study.task,
            "sigma": c.noise_sigma,
            "episodes": study.episodes,
            "gbrl_drop": gbrl,
            "nn_drop": nn,
        },
        criterion=f"t interval over seeds of the paired difference of drops (return at σ=0 − at σ={c.noise_sigma}), "
        f"{gbrl_label} − nn, wholly below 0",
        evidence=[
            compare_paired(
                f"{gbrl_label} drop − nn drop at σ={c.noise_sigma}", gbrl, nn, 0.0, "below", c.confidence
            )
        ],
    )


def shared_claim(runs: pl.DataFrame, params: GBRLParams) -> Claim:
    c = params.claims
    task = c.minigrid_task
    trees_shared, trees_separate = (
        per_seed(runs, task, label, "trees") for label in (c.shared_label, c.separate_label)
    )
    ratios = {seed: trees_shared[seed] / trees_separate[seed] for seed in trees_shared}
    shared, separate = per_seed(runs, task, c.shared_label), per_seed(runs, task, c.separate_label)
    return verdict_claim(
        id="shared_tree",
        statement="A shared actor-critic tree keeps the score of separate policy/value trees with about half "
        "the trees (Fig. 3).",
        measured={
            "task": task,
            "trees_shared": trees_shared,
            "trees_separate": trees_separate,
            "score_shared": shared,
            "score_separate": separate,
        },
        criterion=f"t intervals over seeds: trees shared/separate wholly below {c.shared_tree_ratio}; score "
        f"shared − separate (paired) wholly above −{c.shared_margin}",
        evidence=[
            compare(
                f"trees {c.shared_label} / {c.separate_label} on {task}",
                ratios,
                c.shared_tree_ratio,
                "below",
                c.confidence,
            ),
            compare_paired(
                f"score {c.shared_label} − {c.separate_label} on {task}",
                shared,
                separate,
                -c.shared_margin,
                "above",
                c.confidence,
            ),
        ],
    )


def run(ctx: StepContext) -> None:
    params: GBRLParams = ctx.params
    runs, noise = read_parquet(ctx.input("runs")), read_parquet(ctx.input("noise"))
    claims = [
        minigrid_claim(runs, params),
        cartpole_claim(runs, params),
        noise_claim(noise, params),
        shared_claim(runs, params),
    ]
    for claim in claims:
        ctx.log(f"{claim.id}: {claim.verdict}: {claim.reason}")
    write_claims(claims, ctx.output("claims"))
    write_headline(claims, ctx.output("headline"))
