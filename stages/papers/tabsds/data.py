"""The offline tables of the TabSDS pipeline, each with its prediction target and task.

All ship inside installed packages (no download): scikit-learn's wine, diabetes and breast cancer tables and
statsmodels' `fair` (affairs survey), the mixed numeric/categorical one. Categorical columns are strings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from stages.methods.tabular.metrics import Task


@dataclass(frozen=True)
class TableSource:
    """A named table, its target column and task kind."""

    name: str
    target: str
    task: Task
    load: Callable[[], pl.DataFrame]
    description: str


def _sklearn(loader: str, target_name: str, classes: bool) -> pl.DataFrame:
    import sklearn.datasets

    bunch = getattr(sklearn.datasets, loader)(as_frame=True)
    frame = pl.from_pandas(bunch.frame).rename({"target": target_name})
    if classes:
        frame = frame.with_columns(pl.col(target_name).cast(pl.String))
    return frame


def _diabetes() -> pl.DataFrame:
    import sklearn.datasets

    frame = pl.from_pandas(sklearn.datasets.load_diabetes(as_frame=True, scaled=False).frame)
    return frame.with_columns(
        pl.col("sex").cast(pl.Int64).cast(pl.String), pl.col("target").alias("progression")
    ).drop("target")


def _fair() -> pl.DataFrame:
    import statsmodels.api as sm

    frame = pl.from_pandas(sm.datasets.fair.load_pandas().data)
    categorical = ["rate_marriage", "religious", "educ", "occupation", "occupation_husb"]
    return frame.with_columns(
        *(pl.col(column).cast(pl.Int64).cast(pl.String) for column in categorical),
        (pl.col("affairs") > 0).cast(pl.String).alias("had_affair"),
    ).drop("affairs")


SOURCES = {
    source.name: source
    for source in (
        TableSource(
            "wine",
            "cultivar",
            "classification",
            lambda: _sklearn("load_wine", "cultivar", True),
            "UCI wine: 178 rows, 13 numeric columns, 3 cultivars",
        ),
        TableSource(
            "diabetes",
            "progression",
            "regression",
            _diabetes,
            "diabetes progression: 442 rows, 9 numeric columns and sex (categorical), regression",
        ),
        TableSource(
            "fair",
            "had_affair",
            "classification",
            _fair,
            "statsmodels fair: 6366 rows, 3 numeric and 6 categorical columns (mixed)",
        ),
        TableSource(
            "breast_cancer",
            "diagnosis",
            "classification",
            lambda: _sklearn("load_breast_cancer", "diagnosis", True),
            "Wisconsin breast cancer: 569 rows, 30 numeric columns, binary",
        ),
    )
}
