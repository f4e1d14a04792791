"""Step `tabsds-prepare`: each dataset of the grid, checked, cut to `max_rows` and split 50/50 (seed 123).

Writes `tables/<dataset>/{train,test}.parquet` and `datasets.json` (target, task, rows, column kinds).
"""

from __future__ import annotations

import polars as pl

from stages.core.context import StepContext
from stages.core.errors import DataValidationError
from stages.core.io import write_json, write_parquet
from stages.methods.tabular.own_data import read_table
from stages.methods.tabular.table import infer_spec, leave_out_ids
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


def load(name: str, params: TabSDSParams) -> tuple[pl.DataFrame, str, str, str]:
    """A built-in or own table (its categorical columns as strings), its target, task and description."""
    if name in SOURCES:
        source = SOURCES[name]
        return source.load(), source.target, source.task, source.description
    own = params.own_tables[name]
    table = leave_out_ids(read_table(own.path), own.id_columns, own.categorical, own.path)
    infer_spec(table, own.categorical, where=own.path)
    if own.target not in table.columns:
        raise DataValidationError(
            f"{own.path}: target column {own.target!r} not in the table (tabsds.own_tables.{name})"
        )
    table = table.with_columns(pl.col(column).cast(pl.String) for column in own.categorical)
    spec = infer_spec(table, where=own.path)
    task = "classification" if own.target in spec.categorical else "regression"
    return table, own.target, task, f"your table {own.path}"


def run(ctx: StepContext) -> None:
    params: TabSDSParams = ctx.params
    grid = params.grid
    folder = ctx.output("tables")
    summary = {}
    for name in grid.datasets:
        table, target, task, description = load(name, params)
        spec = infer_spec(table, where=f"dataset {name}")
        train, test = split_table(table, params.test_fraction, params.split_seed, grid.max_rows)
        infer_spec(train, where=f"dataset {name} (training rows)")
        write_parquet(train, folder / name / "train.parquet")
        write_parquet(test, folder / name / "test.parquet")
        summary[name] = {
            "description": description,
            "target": target,
            "task": task,
            "rows": {"train": train.height, "test": test.height, "source": table.height},
            "numeric": list(spec.numeric),
            "categorical": list(spec.categorical),
        }
        ctx.log(f"{name}: {train.height} training / {test.height} held-out rows, {table.width} columns")
    write_json(summary, ctx.output("datasets"))
