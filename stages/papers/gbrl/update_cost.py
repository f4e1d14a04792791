"""Step `gbrl-update_cost`: the Table 1 benchmark, one-tree updates in gbrl, XGBoost and CatBoost on the same
random batches from empty models to Table 1's ensemble size, one thread each, timed per block of updates with
the libraries interleaved in a random order within every block; repeats run side by side in
`update_cost.processes` processes. Writes only under `timings/`."""

from __future__ import annotations

import os

from stages.core.context import StepContext
from stages.core.io import write_json
from stages.methods.rl.update_cost import LIBRARIES, update_block_seconds
from stages.papers.gbrl.params import GBRLParams


def run(ctx: StepContext) -> None:
    os.environ["OMP_NUM_THREADS"] = "1"  # before gbrl's OpenMP runtime starts
    params: GBRLParams = ctx.params
    cost = params.update_cost
    blocks = update_block_seconds(
        LIBRARIES,
        cost.iterations,
        cost.rows,
        cost.features,
        cost.targets,
        cost.depth,
        cost.lr,
        cost.repeats,
        ctx.common.seed,
        block=cost.block,
        workers=cost.processes,
    )
    seconds = {name: [float(sum(per)) for per in values] for name, values in blocks.items()}
    for name, values in seconds.items():
        ctx.log(f"{name}: {cost.iterations} updates in {sorted(values)[len(values) // 2]:.2f} s (median)")
    write_json(
        {"seconds": seconds, "block_seconds": blocks, "workers": cost.processes, **cost.model_dump()},
        ctx.output("update_cost"),
    )
