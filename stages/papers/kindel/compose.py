"""Step `kindel-compose`: DEL-Compose fit to the counts (ZIP likelihood, learned replicate offsets) on each
split's training rows, early-stopped on its valid rows; scores exp(log t)(1 − πᵗ) for the test rows and both
held-out tables. Writes `compose.parquet` (as the baselines') and `offsets.json` (learned βᶜ, βᵗ and the
epochs run, per model, kind and split)."""

from __future__ import annotations

import polars as pl

from stages.core.context import StepContext
from stages.core.io import write_json, write_parquet
from stages.core.progress import progress
from stages.core.seeding import derive_seed
from stages.methods.del_screens import compose
from stages.methods.del_screens.schema import COUNT_COLUMNS, ENRICHMENT, HELDOUT_KINDS, LOAD, SPLIT_KINDS
from stages.papers.kindel.common import load_screen, prediction_rows, split_rows
from stages.papers.kindel.params import KinDELParams


def heldout_data(frame: pl.DataFrame, options) -> compose.CountData:
    """Held-out compounds featurised for scoring (their counts, absent for external compounds, are unused;
    the factorized model needs every compound's synthons: a missing one is an error naming its row)."""
    filled = frame.with_columns(pl.col(c).fill_null(0.0) for c in (*COUNT_COLUMNS, ENRICHMENT))
    filled = filled.with_columns(pl.col(LOAD).clip(lower_bound=1.0))
    return compose.featurise(filled, options, where="held-out")


def run(ctx: StepContext) -> None:
    params: KinDELParams = ctx.params
    screen = load_screen(ctx.input("library"), params.target)
    frames, offsets = [], {}
    for label in params.grid.compose:
        options = params.compose[label].model_copy(update={"threads": 1})  # see baselines.build_model
        data = compose.featurise(screen.library, options)
        heldout = {kind: heldout_data(screen.heldout[kind], options) for kind in HELDOUT_KINDS}
        runs = [(kind, split) for kind in SPLIT_KINDS for split in range(1, params.grid.splits + 1)]
        for kind, split in progress(runs, f"kindel {label}"):
            rows = split_rows(screen, kind, split)
            seed = derive_seed(ctx.common.seed, label, kind, split)
            model = compose.fit(options, data.take(rows["train"]), data.take(rows["valid"]), seed)
            predictions = {"test": model.score(data.take(rows["test"]))}
            predictions |= {kind_: model.score(heldout[kind_]) for kind_ in HELDOUT_KINDS}
            frames.append(prediction_rows(label, kind, split, rows["test"], predictions))
            offsets.setdefault(label, {}).setdefault(kind, {})[str(split)] = {
                **model.offsets(),
                "epochs": len(model.history),
                "best_valid_nll": min(h["valid_nll"] for h in model.history),
            }
            ctx.log(f"{label} {kind} split{split}: {len(model.history)} epochs")
    write_parquet(pl.concat(frames), ctx.output("predictions"))
    write_json(offsets, ctx.output("offsets"))
