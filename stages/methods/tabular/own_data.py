"""Synthesize a user's table: read (Parquet/CSV), check, synthesize, validate with Great Expectations, write.

The synthetic table is fitted on every input row. The optional report measures the method on this table:
a second fit on a training share, scored against the held-out rest (detection, DOMIAS, DCR, association,
KS/TV, utility when a target is named), with a picture of the marginals.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import polars as pl

from stages.core.errors import DataValidationError, MissingSourceError
from stages.core.io import atomic_path, write_text
from stages.core.schema import ColumnSpec, TableSchema
from stages.core.validate import ensure_valid
from stages.methods.tabular.metrics import MetricOptions, evaluate
from stages.methods.tabular.registry import SYNTHESIZERS
from stages.methods.tabular.table import TableSpec, infer_spec, leave_out_ids

RANGE_KEEPING = ("tabsds", "tabsjppds", "smote")


def read_table(path: str | Path) -> pl.DataFrame:
    """A Parquet or CSV table; a missing or unreadable file is an error naming it."""
    path = Path(path)
    if not path.is_file():
        raise MissingSourceError(f"{path}: input table not found")
    try:
        return pl.read_csv(path) if path.suffix.lower() == ".csv" else pl.read_parquet(path)
    except (pl.exceptions.PolarsError, OSError) as error:
        raise DataValidationError(
            f"{path}: not a readable {path.suffix or 'Parquet'} table ({error})"
        ) from None


def write_table(table: pl.DataFrame, path: str | Path) -> None:
    """Write Parquet, or CSV for a `.csv` path, atomically."""
    path = Path(path)
    with atomic_path(path) as tmp:
        if path.suffix.lower() == ".csv":
            table.write_csv(tmp)
        else:
            table.write_parquet(tmp)


def _kind(dtype: pl.DataType) -> str:
    if dtype == pl.Boolean:
        return "bool"
    if dtype.is_integer():
        return "int"
    return "float" if dtype.is_float() else "str"


def output_schema(table: pl.DataFrame, spec: TableSpec, method: str) -> TableSchema:
    """What the synthetic table must satisfy: the input's columns and kinds, no nulls, categories from the
    input's levels, and (for range-keeping methods) numeric values within the input's range."""
    columns = []
    for column in spec.columns:
        dtype = spec.dtypes[column]
        kind = _kind(dtype)
        if column in spec.categorical:
            allowed = tuple(table[column].unique().to_list()) if dtype == pl.String else None
            columns.append(ColumnSpec(column, kind, allowed=allowed))
        elif method in RANGE_KEEPING:
            columns.append(
                ColumnSpec(column, kind, min=float(table[column].min()), max=float(table[column].max()))
            )
        else:
            columns.append(ColumnSpec(column, kind))
    return TableSchema("synthetic_table", tuple(columns), min_rows=1)


def synthesize_file(
    input_path: str | Path,
    output_path: str | Path,
    method: str = "tabsds",
    n_levels: int = 30,
    categorical: list[str] | None = None,
    target: str | None = None,
    seed: int = 0,
    report: str | Path | None = None,
    test_fraction: float = 0.5,
    id_columns: list[str] | None = None,
) -> dict:
    """Synthesize `input_path` into `output_path` (and a Markdown report); returns a summary.

    `id_columns` are left out (not synthesized, not in the output); an undeclared id-like numeric column is an
    error (`stages.methods.tabular.table.leave_out_ids`).
    """
    table = leave_out_ids(read_table(input_path), id_columns or [], categorical or [], str(input_path))
    spec = infer_spec(table, categorical or [], where=str(input_path))
    if target is not None and target not in spec.columns:
        raise DataValidationError(f"{input_path}: target column {target!r} not in the table")
    options = {"n_levels": n_levels} if method in ("tabsds", "tabsjppds") else {}
    synthesizer = SYNTHESIZERS.build(method, options, key="--method options")
    synthesizer.categorical = tuple(categorical or [])
    start = time.perf_counter()
    synthetic = synthesizer.fit(table, np.random.default_rng(seed)).sample(np.random.default_rng(seed + 1))
    seconds = time.perf_counter() - start
    ensure_valid(synthetic, output_schema(table, spec, method), f"synthetic {input_path}")
    summary = {
        "method": method,
        "rows": synthetic.height,
        "columns": synthetic.width,
        "seconds": round(seconds, 3),
        "numeric_columns": list(spec.numeric),
        "categorical_columns": list(spec.categorical),
        "id_columns_left_out": list(id_columns or []),
    }
    text = None
    if report is not None:
        text = report_text(table, spec, method, options, target, seed, test_fraction, Path(report), summary)
    write_table(synthetic, output_path)
    if text is not None:
        write_text(text, report)
    return summary


def report_text(
    table: pl.DataFrame,
    spec: TableSpec,
    method: str,
    options: dict,
    target: str | None,
    seed: int,
    test_fraction: float,
    report: Path,
    summary: dict,
) -> str:
    """The Markdown report: metrics of a fit on a training share against the held-out rows, marginals figure."""
    shuffled = table.sample(fraction=1.0, shuffle=True, seed=seed)
    n_test = max(1, round(table.height * test_fraction))
    train, test = shuffled.head(table.height - n_test), shuffled.tail(n_test)
    synthesizer = SYNTHESIZERS.build(method, options)
    synthesizer.categorical = spec.categorical
    synthetic = synthesizer.fit(train, np.random.default_rng(seed)).sample(np.random.default_rng(seed + 1))
    task = "classification" if target in spec.categorical else "regression"
    metrics = evaluate(
        train, test, synthetic, target, task, MetricOptions(), seed, infer_spec(train, spec.categorical)
    )
    figure = report.with_suffix(".marginals.png")
    marginals_png(train, synthetic, spec, figure)
    lines = [
        f"# Synthetic table: {method} {options or ''}",
        "",
        f"{summary['rows']} rows × {summary['columns']} columns in {summary['seconds']} s (fit + sample).",
        f"Metrics below: a fit on {train.height} rows scored against {test.height} held-out rows.",
        "",
        f"Columns used: numeric {', '.join(spec.numeric) or '—'}; categorical "
        f"{', '.join(spec.categorical) or '—'}; left out as row ids: "
        f"{', '.join(summary['id_columns_left_out']) or '—'}.",
        "",
        "| metric | value | meaning |",
        "|---|---|---|",
    ]
    meaning = {
        "detection_auroc": "xgboost telling held-out real from synthetic (0.5: indistinguishable)",
        "mia_auroc": "DOMIAS membership inference (0.5: no leak)",
        "dcr_median": "median distance of a training row to its closest synthetic row",
        "dcr_reference_median": "the same for held-out rows to training rows (reference)",
        "association_error": "mean absolute difference of pairwise associations",
        "ks_mean": "mean KS statistic over numeric columns",
        "tv_mean": "mean total variation over categorical columns",
        "utility_synthetic": f"xgboost trained on synthetic, predicting {target} on held-out rows",
        "utility_real": "the same trained on real rows",
    }
    lines += [f"| {key} | {value:.4f} | {meaning[key]} |" for key, value in metrics.items()]
    lines += ["", f"![marginals]({figure.name})", ""]
    return "\n".join(lines)


def marginals_png(real: pl.DataFrame, synthetic: pl.DataFrame, spec: TableSpec, path: Path) -> None:
    """Histograms (numeric) and level shares (categorical), real vs synthetic, up to 12 columns."""
    from stages.core.metrics import new_figure, save_figure

    columns = list(spec.columns)[:12]
    ncols = min(4, len(columns))
    nrows = -(-len(columns) // ncols)
    figure, axes = new_figure(3.2 * ncols, 2.6 * nrows, ncols=ncols, nrows=nrows)
    axes = np.atleast_1d(axes).ravel()
    for axis, column in zip(axes, columns, strict=False):
        if column in spec.categorical:
            levels = sorted(real[column].cast(pl.String).unique().to_list())[:20]
            for offset, (name, frame) in enumerate((("real", real), ("synthetic", synthetic))):
                values = frame[column].cast(pl.String).to_list()
                shares = [values.count(level) / len(values) for level in levels]
                axis.bar(np.arange(len(levels)) + 0.4 * offset, shares, 0.4, label=name)
            axis.set_xticks(np.arange(len(levels)) + 0.2, levels, rotation=45, fontsize=6)
        else:
            bins = np.histogram_bin_edges(real[column].cast(pl.Float64).to_numpy(), bins=20)
            for name, frame in (("real", real), ("synthetic", synthetic)):
                axis.hist(
                    frame[column].cast(pl.Float64).to_numpy(), bins=bins, density=True, alpha=0.5, label=name
                )
        axis.set_title(column, fontsize=8)
    for axis in axes[len(columns) :]:
        axis.axis("off")
    axes[0].legend(fontsize=7)
    save_figure(figure, path)
