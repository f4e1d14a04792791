"""Step `tabsds-prepare`: each dataset of the grid, checked, cut to `max_rows` and split 50/50 (seed 123).

Writes `tables/<dataset>/{train,test}.parquet` and `datasets.json` (target, task, rows, column kinds).
"""

from __future__ import annotations

import polars as pl

from stages.core.context import StepContext
from stages.core.io import write_json, write_parquet
from stages.methods.tabular.table import infer_spec
from stages.papers.tabsds.data import SOURCES
from stages.papers.tabsds.params import TabSDSParams


def split_table(
    table: pl.DataFrame, test_fraction: float, seed: int, max_rows: int | None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Shuffle (keeping at most `max_rows` rows) and cut into training and held-out rows."""
    keep = table.height if max_rows is None else min(max_rows, table.height)
    shuffled = table.sample(n=keep, shuffle=True, seed=seed)
    n_test = round(keep * test_fraction)
    return shuffled.head(keep - n_test), shuffled.tail(n_test)


def run(ctx: StepContext) -> None:
    params: TabSDSParams = ctx.params
    grid = params.grid
    folder = ctx.output("tables")
    summary = {}
    for name in grid.datasets:
        source = SOURCES[name]
        table = source.load()
        spec = infer_spec(table, where=f"dataset {name}")
        train, test = split_table(table, params.test_fraction, params.split_seed, grid.max_rows)
        infer_spec(train, where=f"dataset {name} (training rows)")
        write_parquet(train, folder / name / "train.parquet")
        write_parquet(test, folder / name / "test.parquet")
        summary[name] = {
            "description": source.description,
            "target": source.target,
            "task": source.task,
            "rows": {"train": train.height, "test": test.height, "source": table.height},
            "numeric": list(spec.numeric),
            "categorical": list(spec.categorical),
        }
        ctx.log(f"{name}: {train.height} training / {test.height} held-out rows, {table.width} columns")
    write_json(summary, ctx.output("datasets"))
