"""The shared pool/test step of a classification paper: split the dataset table, validate both parts.

Every paper whose `dataset:` names a classification source uses :func:`pool_step_deps` for its prepare step's
deps and :func:`split_and_validate` in its step function, so each one reads, checks and validates the same way.
"""

from __future__ import annotations

import polars as pl

from stages.core.context import StepContext
from stages.core.errors import PipelineError
from stages.core.io import read_parquet
from stages.core.validate import ensure_valid
from stages.datasets.registry import get_source
from stages.datasets.splits import split_pool_and_test


def pool_step_deps(section: str) -> dict[str, str]:
    """The dataset table of `<section>.dataset` and its validation report (a schema change reruns the step)."""
    return {
        "table": f"data/raw/${{{section}.dataset}}/table.parquet",
        "table_validation": f"data/raw/${{{section}.dataset}}/validation.json",
    }


def split_and_validate(ctx: StepContext, namespace: str) -> tuple[pl.DataFrame, pl.DataFrame, dict]:
    """Pool (from `train` rows, `pool_size`) and test (`test_size`), each validated against the source's schema."""
    params = ctx.params
    table = read_parquet(ctx.input("table"))
    if table.is_empty():
        raise PipelineError(f"{ctx.input('table')}: the dataset table is empty; nothing to draw a pool from")
    pool, test = split_pool_and_test(table, params.pool_size, params.test_size, ctx.common.seed, namespace)
    schema = get_source(params.dataset).schema
    reports = {
        name: ensure_valid(frame, schema, f"{namespace} {name} ({params.dataset})").to_dict()
        for name, frame in (("pool", pool), ("test", test))
    }
    ctx.log(f"pool {pool.height} rows, test {test.height} rows, {pool['label'].n_unique()} classes")
    return pool, test, reports
