"""Step `kindel-library`: the screen in the KinDEL layout — simulated, or read from your KinDEL folder.

Writes `library/` (`{target}_1M.parquet`, `splits/`, `heldout/`, all validated with Great Expectations),
`truth.parquet` (the simulated affinity, log c and log t per compound; empty for real files) and `screen.json`
(source, planted replicate offsets, building blocks, validation reports).
"""

from __future__ import annotations

import polars as pl

from stages.core.context import StepContext
from stages.core.io import write_json, write_parquet
from stages.methods.del_screens.files import Screen, read_folder, validate, write_folder
from stages.methods.del_screens.simulate import simulate
from stages.papers.kindel.params import KinDELParams

TRUTH_SCHEMA = {
    "smiles": pl.String,
    "molecule_hash": pl.String,
    "affinity": pl.Float64,
    "linker": pl.Float64,
    "affinity_ondna": pl.Float64,
    "log_c": pl.Float64,
    "log_t": pl.Float64,
}


def build(params: KinDELParams, seed: int) -> tuple[Screen, pl.DataFrame, dict]:
    """The screen, its truth table and a summary, from the configured source."""
    if params.source == "folder":
        screen, reports = read_folder(params.folder, params.target, params.max_rows, seed)
        return screen, pl.DataFrame(schema=TRUTH_SCHEMA), {"source": params.folder, "validation": reports}
    options = params.simulation.model_copy(update={"per_cycle": params.grid.per_cycle})
    simulated = simulate(options)
    screen = Screen(simulated.library, simulated.splits, simulated.heldout)
    summary = {"source": "simulated", **simulated.parameters, "validation": validate(screen, params.target)}
    return screen, simulated.truth.select(list(TRUTH_SCHEMA)), summary


def run(ctx: StepContext) -> None:
    params: KinDELParams = ctx.params
    screen, truth, summary = build(params, ctx.common.seed)
    write_folder(screen, ctx.output("library"), params.target)
    write_parquet(truth, ctx.output("truth"))
    write_json(summary, ctx.output("screen"))
    heldout = {kind: frame.height for kind, frame in screen.heldout.items()}
    ctx.log(f"{summary['source']}: {screen.library.height} compounds, held-out {heldout}")
