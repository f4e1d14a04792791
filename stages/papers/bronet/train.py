"""Step `bronet-train`: LipConvNet on Fashion-MNIST for conv ∈ {BRO, Cayley, SOC} × loss ∈ {LA, CE + CR} × seeds
(`grid.blocks` per stage, BRO rank `grid.rank`), and the BRO rank sweep (LA, `rank_sweep.blocks` per stage so
that c_in = c_out layers exist). Every run of a seed starts from the same batch order; peers get the same
epochs, optimiser and data. Per run: clean and certified accuracy at {36, 72, 108}/255, ACR, the Lipschitz
bound used, activation memory; per test item: correctness and radii; the first seed's runs of the main grid
are attacked by l2 PGD within each certified point's radius (a certified point that flips is unsound).

Writes `runs.parquet`, `items.parquet`, the first seed's BRO + LA model (`models/bro_la/`, safetensors + JSON
config) and seconds per epoch in `timings/train.json`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import polars as pl
import torch

from stages.core.context import StepContext
from stages.core.io import write_json, write_parquet
from stages.core.progress import progress
from stages.core.seeding import derive_seed, pin_threads
from stages.methods.lipschitz.certify import pgd_l2
from stages.methods.lipschitz.nets import LipConvNet, LipConvNetConfig, parameter_count, save_lipconvnet
from stages.methods.lipschitz.train import Evaluation, TrainOptions, evaluate, saved_bytes, train
from stages.papers.bronet.data import load_split
from stages.papers.bronet.params import BRONetParams, ClaimsParams


@dataclass(frozen=True)
class RunSpec:
    """One trained net."""

    track: str  # "grid" or "rank"
    conv: str
    loss: str
    rank: float
    blocks: int
    seed: int

    @property
    def label(self) -> str:
        return f"{self.track}/{self.conv}/{self.loss}/r{self.rank}/b{self.blocks}/s{self.seed}"


def run_specs(params: BRONetParams) -> list[RunSpec]:
    """The main grid, then the rank sweep (its r = grid.rank run is trained again: other blocks)."""
    grid = params.grid
    specs = [
        RunSpec("grid", conv, loss, grid.rank, grid.blocks, seed)
        for seed in grid.seeds
        for conv in grid.convs
        for loss in grid.losses
    ]
    sweep = grid.rank_sweep
    specs += [
        RunSpec("rank", "bro", "la", rank, sweep.blocks, seed) for seed in sweep.seeds for rank in sweep.ranks
    ]
    return specs


def options_for(params: BRONetParams, loss: str) -> TrainOptions:
    opt, la = params.grid.optimiser, params.loss
    return TrainOptions(
        loss=loss,  # type: ignore[arg-type]
        epochs=opt.epochs,
        batch=opt.batch,
        lr=opt.lr,
        momentum=opt.momentum,
        weight_decay=opt.weight_decay,
        temperature=la.temperature,
        offset=la.offset,
        beta=la.beta,
        alpha=la.alpha,
        gamma=la.gamma,
    )


def attack_violations(
    model: LipConvNet, x: torch.Tensor, result: Evaluation, claims: ClaimsParams, seed: int
) -> dict:
    """PGD within each certified correct point's radius (first `attack_points` test items): how many flip; and
    how many the same attack flips with `attack_power` × the radius (0 there: the attack could not say no)."""
    points = claims.attack_points
    rows = np.flatnonzero(result.correct[:points] & (result.radii[:points] > 0))
    if len(rows) == 0:
        return {"attacked": 0, "flipped": 0, "flipped_beyond": 0}
    index = torch.as_tensor(rows)
    radius = torch.as_tensor(result.radii[rows], dtype=torch.float32)
    labels = torch.as_tensor(result.predictions[rows])
    inside = pgd_l2(model, x[index], labels, radius * (1 - 1e-4), steps=claims.attack_steps, seed=seed)
    beyond = pgd_l2(
        model, x[index], labels, radius * claims.attack_power, steps=claims.attack_steps, seed=seed
    )
    return {"attacked": len(rows), "flipped": int(inside.sum()), "flipped_beyond": int(beyond.sum())}


def run(ctx: StepContext) -> None:
    params: BRONetParams = ctx.params
    pin_threads(params.threads)
    grid = params.grid
    train_x, train_y, test_x, test_y = load_split(ctx.input("datasets"), "fashion")
    mean, std = float(train_x.mean()), float(train_x.std())
    runs, items, seconds = [], [], {}
    first_seed = grid.seeds[0]
    for spec in progress(run_specs(params), "bronet train"):
        run_seed = derive_seed(ctx.common.seed, "bronet", "train", spec.seed)
        torch.manual_seed(derive_seed(run_seed, spec.conv, spec.blocks))  # same init for every rank and loss
        config = LipConvNetConfig(
            conv=spec.conv, width=grid.width, blocks=spec.blocks, rank=spec.rank, mean=[mean], std=[std]
        )
        model = LipConvNet(config)
        started = time.perf_counter()
        losses = train(model, train_x, train_y, options_for(params, spec.loss), run_seed)
        seconds[spec.label] = (time.perf_counter() - started) / grid.optimiser.epochs
        result = evaluate(model, test_x, test_y)
        summary = result.summary()
        attack = {"attacked": 0, "flipped": 0, "flipped_beyond": 0}
        if spec.track == "grid" and spec.seed == first_seed:
            attack = attack_violations(model, test_x, result, params.claims, run_seed)
        if spec.track == "grid" and spec.seed == first_seed and (spec.conv, spec.loss) == ("bro", "la"):
            save_lipconvnet(model, ctx.output("model"))
        ctx.log(f"{spec.label}: {summary} loss {losses[-1]:.4f} attack {attack}")
        runs.append(
            {
                **spec.__dict__,
                "label": spec.label,
                **{key: round(value, 6) for key, value in summary.items()},
                "lipschitz": result.lipschitz,
                "final_train_loss": losses[-1],
                "parameters": parameter_count(model),
                "saved_bytes_batch32": saved_bytes(model, test_x[:32].clone()),
                **attack,
            }
        )
        items.append(
            pl.DataFrame(
                {
                    "label": [spec.label] * len(test_y),
                    "item": np.arange(len(test_y)),
                    "target": test_y.numpy(),
                    "correct": result.correct,
                    "radius": result.radii,
                    "label_radius": result.label_radii,
                }
            )
        )
    if not ctx.output("model").exists():
        raise RuntimeError("the grid has no BRO + LA run: add bro to convs and la to losses")
    write_parquet(pl.DataFrame(runs), ctx.output("runs"))
    write_parquet(pl.concat(items), ctx.output("items"))
    write_json({"seconds_per_epoch": seconds}, ctx.output("train_timings"))
