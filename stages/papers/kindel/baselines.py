"""Step `kindel-baselines`: RF, XGBoost, KNN and the DNN on Morgan fingerprints (r = 2, 2048 bits), fit to
`target_enrichment` on each split's training rows (the DNN stops on its valid rows), predicting the test rows
and both held-out tables. Writes `baselines.parquet` (model, kind, split, set, row, prediction)."""

from __future__ import annotations

import polars as pl

from stages.core.context import StepContext
from stages.core.io import write_parquet
from stages.core.progress import progress
from stages.core.seeding import derive_seed
from stages.methods.del_screens.baselines import REGRESSORS
from stages.methods.del_screens.fingerprints import morgan_smiles
from stages.methods.del_screens.schema import ENRICHMENT, HELDOUT_KINDS, SPLIT_KINDS
from stages.papers.kindel.common import load_screen, prediction_rows, split_rows
from stages.papers.kindel.params import KinDELParams


def build_model(params: KinDELParams, label: str):
    """The configured regressor `label`; the DNN gets this scale's epochs (torch on one thread: on a shared
    machine a second thread oversubscribes the cores, and outputs then depend on no thread setting)."""
    entry = params.baselines[label]
    options = dict(entry.options)
    if entry.model == "dnn":
        grid = params.grid
        options = {"epochs": grid.dnn_epochs, "patience": grid.dnn_patience, **options, "threads": 1}
    return REGRESSORS.build(entry.model, options, key=f"kindel.baselines.{label}.options")


def run(ctx: StepContext) -> None:
    params: KinDELParams = ctx.params
    screen = load_screen(ctx.input("library"), params.target)
    fp = {"radius": params.baseline_radius, "n_bits": params.baseline_bits}
    features = morgan_smiles(screen.library["smiles"].to_list(), **fp, where="library")
    heldout = {kind: morgan_smiles(screen.heldout[kind]["smiles"].to_list(), **fp) for kind in HELDOUT_KINDS}
    y = screen.library[ENRICHMENT].to_numpy()
    runs = [
        (label, kind, split)
        for label in params.baseline_labels
        for kind in SPLIT_KINDS
        for split in range(1, params.grid.splits + 1)
    ]
    frames = []
    for label, kind, split in progress(runs, "kindel baselines"):
        rows = split_rows(screen, kind, split)
        model = build_model(params, label)
        model.fit(
            features[rows["train"]],
            y[rows["train"]],
            features[rows["valid"]],
            y[rows["valid"]],
            seed=derive_seed(ctx.common.seed, label, kind, split),
        )
        predictions = {"test": model.predict(features[rows["test"]])}
        predictions |= {kind_: model.predict(heldout[kind_]) for kind_ in HELDOUT_KINDS}
        frames.append(prediction_rows(label, kind, split, rows["test"], predictions))
        ctx.log(f"{label} {kind} split{split}: fit on {len(rows['train'])} rows")
    write_parquet(pl.concat(frames), ctx.output("predictions"))
