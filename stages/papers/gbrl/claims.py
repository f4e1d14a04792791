"""Step `gbrl-claims`: the card's claims about returns, robustness and model size, three-way verdicts over
seeds (the claims about time, `update_cost` and `shared_update_time`, are judged by `gbrl-timing`).

Every policy of a task at a given seed shares the run seed (environment resets, sampling generator, initial
weights), so differences are paired by seed. Each task also has a uniform-random policy per seed (`random`
rows of the runs table): a comparison between policies that do not leave random play decides nothing.

- `minigrid_vs_nn`: on the MiniGrid task, GBRL's score − the network's (paired t interval over seeds) wholly
  above −margin, where at least one of them leaves random play;
- `cartpole_parity`: on CartPole, GBRL's score / the network's (per-seed ratio, judged on the log scale: t
  interval of the mean log-ratio, a geometric mean) wholly above 0.9 (within 10%);
- `noise_robustness`: the drop of each policy's return from σ = 0 to σ = 0.2 relative to its own clean
  return, GBRL's − the network's (paired t interval) wholly below 0 (GBRL loses a smaller share);
- `shared_tree`: per task with both layouts, shared/separate saved model bytes (log scale) wholly below 0.6,
  and shared − separate score (paired) wholly above −margin × the separate trees' gain over random play.
The score of a run is the mean return of its last 100 training episodes (the paper's).

Written before the runs, from the budget: the default scale does not run MiniGrid (GBRL at Table 2's 20 PPO
epochs fits 160 categorical trees per 4,096-step rollout, ~16 s here, hours per 1M-step run), so
`minigrid_vs_nn` and the MiniGrid part of `shared_tree` are `inconclusive` by design there and judged at
`scale: full`; a scale that cuts GBRL's PPO epochs below Table 2's is inconclusive by design on that task too.
Below GBRL's CartPole operating point (`claims.cartpole_steps`: the official script's 1M steps) a
`cartpole_parity` that fails is reported as inconclusive by design (a `holds` stands).
"""

from __future__ import annotations

import polars as pl

from stages.core.claims import (
    Claim,
    Evidence,
    combine,
    compare_paired,
    compare_ratio,
    decide,
    evidence_reason,
    verdict_claim,
    write_claims,
)
from stages.core.context import StepContext
from stages.core.headline import write_headline
from stages.core.io import read_parquet
from stages.papers.gbrl.params import GBRLParams

MINIGRID_BUDGET = (
    "the default 5-minute budget does not run {task}: at Table 2's 20 PPO epochs GBRL fits 160 trees per "
    "4,096-step rollout (~0.1 s per tree on 512 × 51 strings here, ~16 s per rollout), hours per run at the "
    "paper's 1M steps, and fewer epochs or steps leave GBRL near random play (measured before: 0.106 / 0.130 "
    "against random 0.058 at 4 of 20 epochs and 41k steps), which would decide the comparison by the cut; "
    "`gbrl.scale: full` runs it (1M steps, 5 seeds, Table 2's epochs)"
)


def per_seed(frame: pl.DataFrame, task: str, policy: str, column: str = "score") -> dict[str, float]:
    rows = frame.filter((pl.col("task") == task) & (pl.col("policy") == policy)).sort("seed")
    return {str(seed): float(value) for seed, value in zip(rows["seed"], rows[column], strict=True)}


def epoch_cuts(params: GBRLParams, task: str, labels: list[str]) -> dict[str, tuple[int, int]]:
    """The policies whose PPO epochs this scale cuts below their Table 2 setting: {label: (run, Table 2)}."""
    cuts = {}
    for label in labels:
        run, table = params.policy(task, label).ppo.epochs, params.tasks[task].policies[label].ppo.epochs
        if run < table:
            cuts[label] = (run, table)
    return cuts


def cuts_text(cuts: dict[str, tuple[int, int]]) -> str:
    """`gbrl_shared runs 4 of Table 2's 20 PPO epochs` for each cut policy."""
    return " and ".join(
        f"{label} runs {run} of Table 2's {table} PPO epochs" for label, (run, table) in cuts.items()
    )


def gain_over_random(runs: pl.DataFrame, task: str, label: str, confidence: float) -> Evidence:
    """The policy's score − the random policy's, paired by seed, wholly above 0 (it leaves random play)."""
    return compare_paired(
        f"{label} − random score on {task}",
        per_seed(runs, task, label),
        per_seed(runs, task, "random"),
        0.0,
        "above",
        confidence,
        note="uniform-random policy, same task and seed",
    )


def minigrid_claim(runs: pl.DataFrame, params: GBRLParams) -> Claim:
    c = params.claims
    task, label = c.minigrid_task, c.gbrl_label
    statement = (
        "On MiniGrid, GBRL matches or beats the neural network at equal environment steps "
        "(GoToDoor .96 vs .60, DoorKey .96 vs .78 in the paper)."
    )
    criterion = (
        f"t interval over seeds of {label} − nn score (mean return of the last 100 training episodes, paired by "
        f"seed) wholly above −{c.minigrid_margin}, where {label} or nn leaves random play (score − random "
        "wholly above 0); inconclusive by design where the scale does not run the task or cuts GBRL's PPO "
        "epochs below Table 2's"
    )
    could_hold = (
        f"{label} at Table 2's settings scores at least the network's (SB3 at the official script's settings) "
        f"minus {c.minigrid_margin} on the same seeds, beyond the seed noise."
    )
    could_fail = "The network's score exceeds GBRL's by more than the margin beyond the seed noise."
    if task not in params.grid.steps:
        reason = "Inconclusive by design: " + MINIGRID_BUDGET.format(task=task) + "."
        return verdict_claim(
            id="minigrid_vs_nn",
            statement=statement,
            measured={"task": task, "run_at_this_scale": False},
            criterion=criterion,
            evidence=[],
            could_hold=could_hold + " Not at this scale: " + MINIGRID_BUDGET.format(task=task) + ".",
            could_fail=could_fail + " Not at this scale (see could_hold).",
            unit="seed",
            verdict="inconclusive",
            reason=reason,
        )
    gbrl, nn = per_seed(runs, task, label), per_seed(runs, task, "nn")
    difference = compare_paired(
        f"{label} − nn score on {task}", gbrl, nn, -c.minigrid_margin, "above", c.confidence
    )
    gains = [gain_over_random(runs, task, name, c.confidence) for name in (label, "nn")]
    verdict, reason = decide([difference])
    cuts = epoch_cuts(params, task, [label])
    if cuts:
        verdict = "inconclusive"
        reason = (
            f"Inconclusive by design: {cuts_text(cuts)} while the network keeps its settings, so GBRL barely "
            "leaves random play on this task and the comparison measures the epoch cut, not the method."
        )
    elif not any(gain.verdict == "holds" for gain in gains):
        verdict = "inconclusive"
        reason = (
            f"Neither {label} nor the network leaves random play beyond the seed noise, so their difference "
            "decides nothing."
        )
    return verdict_claim(
        id="minigrid_vs_nn",
        statement=statement,
        measured={
            "task": task,
            "env_steps": params.grid.steps[task],
            label: gbrl,
            "nn": nn,
            "random": per_seed(runs, task, "random"),
        },
        criterion=criterion,
        evidence=[difference, *gains],
        could_hold=could_hold,
        could_fail=could_fail,
        unit="seed",
        verdict=verdict,
        reason=reason,
    )


def cartpole_claim(runs: pl.DataFrame, params: GBRLParams) -> Claim:
    c = params.claims
    label, steps = c.gbrl_label, params.grid.steps["cartpole"]
    gbrl, nn = per_seed(runs, "cartpole", label), per_seed(runs, "cartpole", "nn")
    ratios = {seed: gbrl[seed] / nn[seed] for seed in gbrl}
    evidence = compare_ratio(
        f"{label} / nn score on cartpole", ratios, c.cartpole_ratio, "above", c.confidence, unit="seeds"
    )
    verdict, reason = decide([evidence])
    short = steps < c.cartpole_steps
    if short and verdict == "fails":
        verdict = "inconclusive"
        reason = (
            f"Inconclusive by design: at {steps} env steps GBRL at Table 2's settings is below its CartPole "
            f"operating point ({c.cartpole_steps}: the official ppo_gbrl.sh runs 1M steps, the network's RL-Zoo "
            "schedule 100k), so a ratio below the bound here measures the step budget, not Table 3's parity. "
            f"As measured: {reason}"
        )
    return verdict_claim(
        id="cartpole_parity",
        statement="On CartPole GBRL reaches the network's return (500 vs 500 in the paper).",
        measured={"env_steps": steps, label: gbrl, "nn": nn, "random": per_seed(runs, "cartpole", "random")},
        criterion=f"t interval over seeds of the mean log score ratio {label}/nn (geometric mean) wholly above "
        f"{c.cartpole_ratio}; below {c.cartpole_steps} env steps a `fails` is reported as inconclusive",
        evidence=[evidence],
        could_hold=f"At {steps} env steps, GBRL at Table 2's CartPole settings scores at least "
        f"{c.cartpole_ratio}× the network (SB3 at RL-Zoo's CartPole settings) on the same seeds beyond the seed "
        "noise (both capped at 500).",
        could_fail=f"GBRL's score is below {c.cartpole_ratio}× the network's beyond the seed noise"
        + (
            f"; at {steps} < {c.cartpole_steps} steps only a `holds` counts (only a run at GBRL's operating "
            "point, `scale: full`, can make it fail)."
            if short
            else "."
        ),
        unit="seed",
        verdict=verdict,
        reason=reason,
    )


def relative_drops(noise: pl.DataFrame, policy: str, sigma: float) -> dict[str, float]:
    """Per seed, 1 − mean return at `sigma` / mean return at σ = 0: the share of its own clean return lost."""
    means = noise.filter(pl.col("policy") == policy).group_by("seed", "sigma").agg(pl.col("return").mean())
    out = {}
    for seed in sorted(means["seed"].unique()):
        rows = means.filter(pl.col("seed") == seed)
        clean = rows.filter(pl.col("sigma") == 0.0)["return"][0]
        noisy = rows.filter(pl.col("sigma") == sigma)["return"][0]
        out[str(seed)] = float(1.0 - noisy / clean)
    return out


def noise_claim(noise: pl.DataFrame, params: GBRLParams) -> Claim:
    c, study = params.claims, params.noise
    label = c.gbrl_label
    gbrl, nn = relative_drops(noise, label, c.noise_sigma), relative_drops(noise, "nn", c.noise_sigma)
    return verdict_claim(
        id="noise_robustness",
        statement="GBRL loses less return than the network when its inputs are shifted by noise (Fig. 9).",
        measured={
            "task": study.task,
            "sigma": c.noise_sigma,
            "episodes": study.episodes,
            "gbrl_relative_drop": gbrl,
            "nn_relative_drop": nn,
        },
        criterion=f"t interval over seeds of the paired difference of relative drops (1 − return at "
        f"σ={c.noise_sigma} / return at σ=0, each policy against its own clean return), {label} − nn, wholly "
        "below 0",
        could_hold=f"Over {study.episodes} episodes per σ on {study.task} (the same evaluation seeds for both "
        f"policies), GBRL loses a smaller share of its own clean return than the network from σ = 0 to "
        f"σ = {c.noise_sigma}, beyond the seed noise.",
        could_fail=f"GBRL loses a larger share of its clean return than the network at σ = {c.noise_sigma} "
        "beyond the seed noise; if neither loses return at this training length, the difference stays inside "
        "the noise and the claim undecided.",
        unit="seed",
        evidence=[
            compare_paired(
                f"{label} − nn relative drop at σ={c.noise_sigma}", gbrl, nn, 0.0, "below", c.confidence
            )
        ],
    )


def shared_tasks(params: GBRLParams) -> list[str]:
    """Tasks of this scale that train both tree layouts."""
    c = params.claims
    return [
        task
        for task in params.grid.steps
        if {c.shared_label, c.separate_label} <= set(params.tasks[task].policies)
    ]


def shared_claim(runs: pl.DataFrame, params: GBRLParams) -> Claim:
    c = params.claims
    tasks = shared_tasks(params)
    evidence: list[Evidence] = []
    verdicts, parts, measured = [], [], {}
    for task in tasks:
        memory = {
            seed: shared / separate
            for (seed, shared), separate in zip(
                per_seed(runs, task, c.shared_label, "model_bytes").items(),
                per_seed(runs, task, c.separate_label, "model_bytes").values(),
                strict=True,
            )
        }
        shared, separate = per_seed(runs, task, c.shared_label), per_seed(runs, task, c.separate_label)
        gain = gain_over_random(runs, task, c.separate_label, c.confidence)
        margin = c.shared_margin * max(gain.mean or 0.0, 0.0)
        bytes_item = compare_ratio(
            f"model bytes {c.shared_label} / {c.separate_label} on {task}",
            memory,
            c.shared_memory_ratio,
            "below",
            c.confidence,
            unit="seeds",
        )
        score_item = compare_paired(
            f"score {c.shared_label} − {c.separate_label} on {task}",
            shared,
            separate,
            -margin,
            "above",
            c.confidence,
            note=f"margin {c.shared_margin} × the separate trees' mean gain over random play",
        )
        evidence += [bytes_item, score_item, gain]
        measured[task] = {"score_shared": shared, "score_separate": separate, "bytes_ratio": memory}
        cuts = epoch_cuts(params, task, [c.shared_label, c.separate_label])
        score_verdict = score_item.verdict
        text = f"{task}: {evidence_reason(bytes_item)}; {evidence_reason(score_item)}"
        if cuts:
            score_verdict = "inconclusive"
            text += f" (the score is inconclusive by design: {cuts_text(cuts)}, both near random play)"
        elif gain.verdict != "holds":
            score_verdict = "inconclusive"
            text += " (the separate trees do not leave random play, so the scores decide nothing)"
        verdicts.append(combine([bytes_item.verdict, score_verdict]))
        parts.append(text)
    untested = [task for task in ("gotodoor", "doorkey") if task in params.tasks and task not in tasks]
    verdict = combine(verdicts)
    lead = {"holds": "It holds", "fails": "It fails", "inconclusive": "It is undecided"}[verdict]
    reason = f"{lead}: " + " | ".join(parts) + "."
    if untested and params.scale == "default":
        reason += (
            f" MiniGrid ({', '.join(untested)}) is not run at this scale (inconclusive by design there: "
            + MINIGRID_BUDGET.format(task="MiniGrid")
            + ")."
        )
    elif untested:
        reason += f" Not run at this scale (not in `gbrl.{params.scale}.steps`): {', '.join(untested)}."
    return verdict_claim(
        id="shared_tree",
        statement="A shared actor-critic tree keeps the score of separate policy/value trees with about half "
        "the memory (Fig. 3).",
        measured={"tasks": measured, "minigrid_not_run": untested},
        criterion=f"per task with both layouts: t intervals over seeds of the mean log ratio of saved model bytes "
        f"shared/separate (geometric mean) wholly below {c.shared_memory_ratio}, and of the paired score "
        f"difference shared − separate wholly above −{c.shared_margin} × the separate trees' mean gain over random "
        "play (the score part decides only where that gain is wholly above 0); every task must hold",
        evidence=evidence,
        could_hold="Fitting one tree to the concatenated [logits, value] gradients (cosine split score) learns as "
        "well as a policy tree and a value tree fitted apart, on the same seeds and steps, and its model file "
        "(one set of splits, leaves of n_actions + 1 values) is about half of the two files.",
        could_fail="The shared tree's splits serve the value gradients badly (or the policy's), so its score falls "
        "more than the margin below the separate trees' beyond the seed noise; or its file is not smaller by the "
        "bound (the leaves hold as many values as the two ensembles' leaves together, so bytes need not halve).",
        unit="seed",
        verdict=verdict,
        reason=reason,
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
