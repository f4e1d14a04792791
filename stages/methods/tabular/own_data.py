"""Synthesize a user's table: read (Parquet/CSV), check, synthesize, validate with Great Expectations, write.

The synthetic table is fitted on every input row. The optional report measures the method on this table:
a second fit on a training share, scored against the held-out rest (detection, DOMIAS, DCR, association,
KS/TV, utility when a target is named), with pictures of every column's marginal (12 columns a page).

A string column is synthesized as a category, so its synthetic values are input values copied verbatim. That
is refused, before anything is fitted, for a column whose values identify rows (near-unique: ids, e-mails,
names — at least 90 % distinct values, or 50 distinct values making half the rows) or that holds dates as
strings, unless the user asks: `--keep-verbatim COL` (or `--categorical COL`) synthesizes it as a category
anyway, `--id-column COL` leaves it out. The summary and the report give, per string column, the share of
synthetic values found verbatim in the input, with a warning for every near-unique or date column kept.
Decimal columns are synthesized as Float64 (a note says so).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import polars as pl

from stages.core.errors import DataValidationError, MissingSourceError
from stages.core.io import OutputTransaction, atomic_path, write_text
from stages.core.schema import ColumnSpec, TableSchema
from stages.core.validate import ensure_valid
from stages.methods.tabular.metrics import MetricOptions, evaluate
from stages.methods.tabular.registry import SYNTHESIZERS
from stages.methods.tabular.table import TableSpec, infer_spec, leave_out_ids

RANGE_KEEPING = ("tabsds", "tabsjppds", "smote")
NEAR_UNIQUE_SHARE = 0.9  # distinct values / rows at or above which a string column identifies rows
MANY_LEVELS, MANY_LEVELS_SHARE = 50, 0.5  # ... or this many distinct values making this share of the rows
DATE_SHARE = 0.9  # share of a string column's values that parse as dates for it to be a date column
PANEL_COLUMNS = 12  # marginals per figure page


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


def _existing_folder(path: Path) -> Path:
    """The nearest folder above `path` that exists (outputs are staged there; missing folders are made only
    when everything is written)."""
    folder = path.absolute().parent
    while not folder.is_dir():
        folder = folder.parent
    return folder


def decimals_as_float(table: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """Decimal columns cast to Float64 (the synthesizers work in floats); returns the table and their names."""
    decimals = [name for name, dtype in table.schema.items() if isinstance(dtype, pl.Decimal)]
    return table.with_columns(pl.col(name).cast(pl.Float64) for name in decimals), decimals


def _date_share(values: pl.Series) -> float:
    """Share of the non-null values that parse as a date or a date-time (format inferred by Polars)."""
    present = values.drop_nulls()
    if present.len() == 0:
        return 0.0
    best = 0
    for parse in (present.str.to_date, present.str.to_datetime):
        try:
            best = max(best, present.len() - parse(strict=False).null_count())
        except (pl.exceptions.PolarsError, ValueError):
            continue
    return best / present.len()


def string_column_risk(values: pl.Series) -> str | None:
    """Why copying this string column's values verbatim would leak rows (None for an ordinary category)."""
    values = values.cast(pl.String)
    distinct, rows = values.n_unique(), values.len()
    if _date_share(values) >= DATE_SHARE:
        return "it holds dates as strings"
    if rows >= 2 and (
        distinct >= NEAR_UNIQUE_SHARE * rows
        or (distinct >= MANY_LEVELS and distinct >= MANY_LEVELS_SHARE * rows)
    ):
        return f"it is near-unique ({distinct} distinct values in {rows} rows: ids, e-mails, names?)"
    return None


def string_columns(table: pl.DataFrame) -> list[str]:
    """The columns whose values are strings (String, Categorical, Enum)."""
    return [
        name
        for name, dtype in table.schema.items()
        if dtype == pl.String or isinstance(dtype, pl.Categorical | pl.Enum)
    ]


def check_verbatim_risk(table: pl.DataFrame, asked: list[str], where: str) -> dict[str, str]:
    """Refuse a near-unique or date string column the user did not name in `asked`; returns the risky columns
    that were named (column → reason), for the report's warnings."""
    kept = {}
    for column in string_columns(table):
        reason = string_column_risk(table[column])
        if reason is None:
            continue
        if column not in asked:
            raise DataValidationError(
                f"{where}: column {column!r}: {reason}; a synthesizer would copy its values verbatim into the "
                f"output, so it is refused unless asked: --id-column {column} leaves it out, --keep-verbatim "
                f"{column} synthesizes it as a category (values copied)"
            )
        kept[column] = reason
    return kept


def verbatim_shares(real: pl.DataFrame, synthetic: pl.DataFrame) -> dict[str, float]:
    """Per string column: the share of synthetic values found verbatim among the input's values."""
    shares = {}
    for column in string_columns(real):
        seen = real[column].cast(pl.String).unique().implode()
        found = synthetic[column].cast(pl.String).is_in(seen)
        shares[column] = round(float(found.mean()), 4) if synthetic.height else 0.0
    return shares


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
    keep_verbatim: list[str] | None = None,
) -> dict:
    """Synthesize `input_path` into `output_path` (and a Markdown report); returns a summary.

    `id_columns` are left out (not synthesized, not in the output); an undeclared id-like numeric column is an
    error (`stages.methods.tabular.table.leave_out_ids`), as is a near-unique or date string column not named
    in `keep_verbatim` or `categorical` (:func:`check_verbatim_risk`). Nothing is written unless every output
    (table, report, figures) succeeds.
    """
    if not 0 < test_fraction < 1:
        raise DataValidationError(f"--test-fraction: {test_fraction!r}; must be strictly between 0 and 1")
    categorical, keep_verbatim = list(categorical or []), list(keep_verbatim or [])
    table, decimals = decimals_as_float(read_table(input_path))
    table = leave_out_ids(table, id_columns or [], categorical, str(input_path))
    unknown = [column for column in keep_verbatim if column not in table.columns]
    if unknown:
        raise DataValidationError(
            f"{input_path}: --keep-verbatim column(s) not in the table: {', '.join(unknown)}"
        )
    risky = check_verbatim_risk(table, [*keep_verbatim, *categorical], str(input_path))
    spec = infer_spec(table, categorical, where=str(input_path))
    if target is not None and target not in spec.columns:
        raise DataValidationError(f"{input_path}: target column {target!r} not in the table")
    options = {"n_levels": n_levels} if method in ("tabsds", "tabsjppds") else {}
    synthesizer = SYNTHESIZERS.build(method, options, key="--method options")
    synthesizer.categorical = tuple(categorical)
    start = time.perf_counter()
    synthetic = synthesizer.fit(table, np.random.default_rng(seed)).sample(np.random.default_rng(seed + 1))
    seconds = time.perf_counter() - start
    ensure_valid(synthetic, output_schema(table, spec, method), f"synthetic {input_path}")
    shares = verbatim_shares(table, synthetic)
    summary = {
        "method": method,
        "rows": synthetic.height,
        "columns": synthetic.width,
        "seconds": round(seconds, 3),
        "numeric_columns": list(spec.numeric),
        "categorical_columns": list(spec.categorical),
        "id_columns_left_out": list(id_columns or []),
        "decimal_columns_as_float": decimals,
        "verbatim_share": shares,
        "warnings": [
            f"column {column!r}: {reason}; {shares.get(column, 0.0):.0%} of its synthetic values are copied "
            "verbatim from the input"
            for column, reason in risky.items()
        ],
    }
    with OutputTransaction(_existing_folder(Path(output_path)), owner="icml25 synthesize") as transaction:
        if report is not None:
            text = report_text(
                table, spec, method, options, target, seed, test_fraction, Path(report), summary, transaction
            )
            write_text(text, transaction.path(report))
        write_table(synthetic, transaction.path(output_path))
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
    transaction: OutputTransaction | None = None,
) -> str:
    """The Markdown report: metrics of a fit on a training share against the held-out rows, marginals figures
    (staged in `transaction` when given), verbatim-copy shares and warnings."""
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
    figures = marginals_pngs(train, synthetic, spec, report.with_suffix(".marginals.png"), transaction)
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
        "mia_auroc": "DOMIAS membership inference, KDE reference (0.5: no leak)",
        "mia_prior_auroc": "DOMIAS membership inference, normal prior reference (the paper's; 0.5: no leak)",
        "dcr_median": "median distance of a training row to its closest synthetic row",
        "dcr_reference_median": "the same for held-out rows to training rows (reference)",
        "dcr_reference_official_median": "the same for training rows to held-out rows (official reference)",
        "association_error": "mean absolute difference of pairwise associations (|Spearman| numeric pairs)",
        "association_error_pearson": "the same with signed Pearson for numeric pairs (the official scripts')",
        "ks_mean": "mean KS statistic over numeric columns",
        "tv_mean": "mean total variation over categorical columns",
        "utility_synthetic": f"xgboost trained on synthetic, predicting {target} on held-out rows",
        "utility_real": "the same trained on real rows",
    }
    lines += [f"| {key} | {value:.4f} | {meaning[key]} |" for key, value in metrics.items()]
    lines += [
        "",
        *_verbatim_lines(summary),
        *(line for figure in figures for line in (f"![marginals]({figure.name})", "")),
    ]
    return "\n".join(lines)


def _verbatim_lines(summary: dict) -> list[str]:
    """The report's notes: decimals cast, warnings, and the verbatim share of every string column."""
    lines = []
    if summary["decimal_columns_as_float"]:
        lines.append(
            f"Note: Decimal column(s) synthesized as Float64: {', '.join(summary['decimal_columns_as_float'])}."
        )
    lines += [f"**Warning**: {warning}." for warning in summary["warnings"]]
    if summary["verbatim_share"]:
        lines += [
            "",
            "Share of synthetic values found verbatim in the input, per string column (categories are "
            "resampled, so an ordinary category shows 100 %; it matters for columns that identify rows):",
            "",
            "| column | verbatim share |",
            "|---|---|",
            *(f"| {column} | {share:.1%} |" for column, share in summary["verbatim_share"].items()),
        ]
    return [*lines, ""] if lines else []


def marginal_pages(path: Path, n_columns: int) -> list[Path]:
    """The figure files for `n_columns` marginals: `path`, then `<stem>-2.png`, `<stem>-3.png`, ..."""
    pages = max(1, -(-n_columns // PANEL_COLUMNS))
    return [
        path if page == 1 else path.with_name(f"{path.stem}-{page}{path.suffix}")
        for page in range(1, pages + 1)
    ]


def marginals_pngs(
    real: pl.DataFrame,
    synthetic: pl.DataFrame,
    spec: TableSpec,
    path: Path,
    transaction: OutputTransaction | None = None,
) -> list[Path]:
    """Every column's marginal, real vs synthetic, 12 columns a page; returns the final page paths."""
    columns = list(spec.columns)
    pages = marginal_pages(path, len(columns))
    for index, page in enumerate(pages):
        chunk = columns[index * PANEL_COLUMNS : (index + 1) * PANEL_COLUMNS]
        marginals_png(real, synthetic, spec, transaction.path(page) if transaction else page, chunk)
    return pages


def marginals_png(
    real: pl.DataFrame, synthetic: pl.DataFrame, spec: TableSpec, path: Path, columns: list[str] | None = None
) -> None:
    """Histograms (numeric) and level shares (categorical: the 20 most frequent levels), real vs synthetic,
    of `columns` (default: the first 12) in one figure."""
    from stages.core.metrics import new_figure, save_figure

    columns = list(spec.columns)[:PANEL_COLUMNS] if columns is None else columns
    ncols = min(4, len(columns))
    nrows = -(-len(columns) // ncols)
    figure, axes = new_figure(3.2 * ncols, 2.6 * nrows, ncols=ncols, nrows=nrows)
    axes = np.atleast_1d(axes).ravel()
    for axis, column in zip(axes, columns, strict=False):
        title = column
        if column in spec.categorical:
            counts = real[column].cast(pl.String).value_counts(sort=True)
            levels = sorted(counts[column].head(20).to_list(), key=str)
            if counts.height > 20:
                title = f"{column} (20 of {counts.height} levels)"
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
        axis.set_title(title, fontsize=8)
    for axis in axes[len(columns) :]:
        axis.axis("off")
    axes[0].legend(fontsize=7)
    save_figure(figure, path)
