"""The GBRL pipeline: its artefacts and steps (the source `dvc.yaml` is generated from)."""

from __future__ import annotations

from stages.core.steps import Catalog, Pipeline, Plot, Step
from stages.papers.paper import Paper

DATA = Catalog(
    "data/gbrl",
    runs="runs.parquet",
    curves="curves.parquet",
    models="models",
    train_timings="timings/train.json",
    noise="noise.parquet",
    update_cost="timings/update_cost.json",
    metrics="metrics.json",
    plot_data="plots/returns.csv",
    figures="figures",
    time_summary="timings/time_summary.json",
    time_figure="timings/update_time.png",
    timing_claims="timings/claims.json",
    claims="claims.json",
    headline="headline.json",
)
SCALE = ("gbrl.scale", "gbrl.default", "gbrl.full")

STEPS = (
    Step(
        name="train",
        deps={},
        outs=DATA.pick("runs", "curves", "models", timings="train_timings"),
        params=("common.seed", *SCALE, "gbrl.tasks"),
        description="PPO on every task × policy × seed (GBRL shared / separate trees, SB3-style MLP; policies of a "
        "seed paired) and a uniform-random policy per task × seed: episodes, models",
    ),
    Step(
        name="noise",
        deps=DATA.pick("models"),
        outs=DATA.pick("noise"),
        params=("common.seed", *SCALE, "gbrl.tasks", "gbrl.noise"),
        description="the trained CartPole policies under the input shift s + ε|s|, ε ~ N(0, σ), per σ (paired seeds)",
    ),
    Step(
        name="update_cost",
        deps={},
        outs=DATA.pick("update_cost"),
        params=("common.seed", "gbrl.update_cost"),
        description="Table 1: 1000 one-tree updates on random 128×20 batches, gbrl vs XGBoost vs CatBoost, timed per "
        "block of updates (timings only)",
    ),
    Step(
        name="figures",
        deps=DATA.pick("runs", "curves", "noise"),
        outs=DATA.pick("figures"),
        metrics=DATA.pick("metrics"),
        plots={
            "plot_data": Plot(
                DATA["plot_data"], x="window_end", y="mean_return", title="GBRL: return vs steps"
            ),
        },
        params=(*SCALE,),
        description="return vs env steps per task with the random-policy line, return vs noise σ, the scores table",
    ),
    Step(
        name="timing",
        deps=DATA.pick("train_timings", "update_cost"),
        outs=DATA.pick("time_summary", "time_figure", claims="timing_claims"),
        params=("gbrl.claims",),
        description="benchmark step (timings/ only): update time per PPO iteration, env steps/s, Table 1 "
        "ratios, the cost of an update vs ensemble size, and the claims about time",
    ),
    Step(
        name="claims",
        deps=DATA.pick("runs", "noise"),
        outs=DATA.pick("claims"),
        headline=DATA.pick("headline"),
        params=(*SCALE, "gbrl.noise", "gbrl.claims"),
        description="the card's claims about returns, noise robustness and model size, over paired seeds",
    ),
)

PAPER = Paper(
    id="gbrl",
    title="GBRL: gradient-boosted trees as a PPO actor-critic, against neural networks",
    pipeline=Pipeline.of_paper("gbrl", "GBRLParams", STEPS),
    benchmarks="stages.papers.gbrl.benchmarks:run_benchmarks",
    commands=("stages.methods.rl.commands",),
)
