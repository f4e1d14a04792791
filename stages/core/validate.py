"""Validate Polars tables with Great Expectations.

GX has no Polars source, so the table is handed to GX's pandas source. Array columns (images, embeddings)
are summarised per row first (`col[min]`, `col[max]`, `col[len]`, `col[nulls]`) so GX checks their ranges
and shapes without copying 70k×784 values into Python objects.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from stages.core.errors import DataValidationError
from stages.core.io import write_json
from stages.core.schema import ColumnSpec, TableSchema

_KIND_CHECKS = {
    "int": lambda dtype: dtype.is_integer(),
    "float": lambda dtype: dtype.is_float(),
    "str": lambda dtype: dtype in (pl.Utf8, pl.Categorical) or isinstance(dtype, pl.Enum),
    "bool": lambda dtype: dtype == pl.Boolean,
    "array": lambda dtype: isinstance(dtype, pl.Array | pl.List) and dtype.inner.is_numeric(),
}


@dataclass(frozen=True)
class ValidationReport:
    """The outcome of one validation, in a deterministic JSON-ready form."""

    dataset: str
    schema: str
    rows: int
    results: tuple[dict[str, Any], ...]

    @property
    def success(self) -> bool:
        """True when every expectation passed."""
        return all(result["success"] for result in self.results)

    @property
    def failures(self) -> list[dict[str, Any]]:
        """The expectations that failed."""
        return [result for result in self.results if not result["success"]]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (no timestamps, so the file's md5 is stable)."""
        return {
            "dataset": self.dataset,
            "schema": self.schema,
            "rows": self.rows,
            "success": self.success,
            "results": list(self.results),
        }

    def error_message(self) -> str:
        """A message naming the dataset, each failing column and expectation."""
        lines = [f"dataset '{self.dataset}' failed validation against the {self.schema} schema:"]
        for failure in self.failures:
            detail = failure.get("observed") or failure.get("unexpected_examples")
            suffix = f" (observed: {detail})" if detail not in (None, [], "") else ""
            count = failure.get("unexpected_count")
            count_text = f", {count} bad rows" if count else ""
            column, what = _user_facing(failure["column"], failure["expectation"])
            lines.append(f"  column '{column}': {what} failed{count_text}{suffix}")
        return "\n".join(lines)


def validate_table(frame: pl.DataFrame, schema: TableSchema, dataset: str) -> ValidationReport:
    """Run the schema's expectation suite on `frame` and return the report (does not raise)."""
    results: list[dict[str, Any]] = []
    if frame.height < schema.min_rows:
        results.append(_own_result("expect_table_row_count_to_be_at_least", "*", False, frame.height))
    present = [spec for spec in schema.columns if spec.name in frame.columns]
    for spec in schema.columns:
        if spec.name not in frame.columns:
            results.append(_own_result("expect_column_to_exist", spec.name, False, "missing"))
    type_results = [_check_dtype(frame, spec) for spec in present]
    results.extend(type_results)
    bad_types = {result["column"] for result in type_results if not result["success"]}
    ragged = [
        _ragged(frame, spec.name) for spec in present if spec.name not in bad_types and spec.kind == "array"
    ]
    results.extend(result for result in ragged if result is not None)
    bad_types |= {result["column"] for result in ragged if result is not None}
    checkable = [spec for spec in present if spec.name not in bad_types]
    if checkable and frame.height:
        results.extend(_run_gx(_to_checkable_pandas(frame, checkable), checkable))
    return ValidationReport(dataset=dataset, schema=schema.name, rows=frame.height, results=tuple(results))


def ensure_valid(
    frame: pl.DataFrame, schema: TableSchema, dataset: str, report_path: str | Path | None = None
) -> ValidationReport:
    """Validate, save the report as JSON when a path is given, and raise DataValidationError on failure.

    The report is written only for a passing dataset: a failing stage leaves no outputs.
    """
    report = validate_table(frame, schema, dataset)
    if not report.success:
        raise DataValidationError(report.error_message())
    if report_path is not None:
        write_json(report.to_dict(), report_path)
    return report


def _own_result(expectation: str, column: str, success: bool, observed: Any) -> dict[str, Any]:
    return {"expectation": expectation, "column": column, "success": success, "observed": observed}


def _check_dtype(frame: pl.DataFrame, spec: ColumnSpec) -> dict[str, Any]:
    """Types are checked on the Polars dtype (exact for Parquet), recorded like a GX result."""
    dtype = frame.schema[spec.name]
    expectation = f"expect_column_values_to_be_of_kind_{spec.kind}"
    return _own_result(expectation, spec.name, bool(_KIND_CHECKS[spec.kind](dtype)), str(dtype))


def _ragged(frame: pl.DataFrame, column: str) -> dict[str, Any] | None:
    """A failed result when a list column's rows differ in length (a fixed-size array cannot); else None.

    Recorded only on failure, so the reports of valid tables are unchanged."""
    if not isinstance(frame.schema[column], pl.List) or frame.is_empty():
        return None
    lengths = frame[column].list.len()
    low, high = lengths.min(), lengths.max()
    if low == high:
        return None
    observed = f"rows hold {low} to {high} values; every row needs the same number"
    return _own_result("expect_array_lengths_to_be_equal", column, False, observed)


def _summary_name(column: str, what: str) -> str:
    return f"{column}[{what}]"


_SUMMARY_MEANING = {
    "nulls": "every value finite (no null, NaN or ±inf)",
    "len": "array length",
    "min": "array values within bounds",
    "max": "array values within bounds",
}


def _user_facing(column: str | None, expectation: str) -> tuple[str, str]:
    """The table's own column name and what was checked, for a per-row summary like `features[nulls]`."""
    if column and column.endswith("]") and "[" in column:
        name, _, what = column[:-1].rpartition("[")
        if what in _SUMMARY_MEANING:
            return name, f"{_SUMMARY_MEANING[what]} ({expectation} per row)"
    return str(column), expectation


def _to_checkable_pandas(frame: pl.DataFrame, specs: list[ColumnSpec]):
    expressions = []
    for spec in specs:
        column = pl.col(spec.name)
        if spec.kind != "array":
            expressions.append(column)
            continue
        as_list = column.arr.to_list() if isinstance(frame.schema[spec.name], pl.Array) else column
        expressions += [
            as_list.list.min().cast(pl.Float64).alias(_summary_name(spec.name, "min")),
            as_list.list.max().cast(pl.Float64).alias(_summary_name(spec.name, "max")),
            as_list.list.len().cast(pl.Int64).alias(_summary_name(spec.name, "len")),
            (
                as_list.list.eval(pl.element().is_null() | ~pl.element().cast(pl.Float64).is_finite())
                .list.sum()
                .cast(pl.Int64)
            )
            .fill_null(1)
            .alias(_summary_name(spec.name, "nulls")),
        ]
    return frame.select(expressions).to_pandas()


def _expectations_for(spec: ColumnSpec) -> list[tuple[str, str, Any]]:
    """(gx class name, column in the checked frame, kwargs) for one column spec."""
    import great_expectations.expectations as gxe

    if spec.kind == "array":
        rows = [(gxe.ExpectColumnValuesToBeBetween, _summary_name(spec.name, "nulls"), {"max_value": 0})]
        if spec.length is not None:
            rows.append(
                (
                    gxe.ExpectColumnValuesToBeBetween,
                    _summary_name(spec.name, "len"),
                    {"min_value": spec.length, "max_value": spec.length},
                )
            )
        if spec.min is not None or spec.max is not None:
            bounds = {"min_value": spec.min, "max_value": spec.max}
            rows.append((gxe.ExpectColumnValuesToBeBetween, _summary_name(spec.name, "min"), bounds))
            rows.append((gxe.ExpectColumnValuesToBeBetween, _summary_name(spec.name, "max"), bounds))
        return rows
    rows = []
    if not spec.nullable:
        rows.append((gxe.ExpectColumnValuesToNotBeNull, spec.name, {}))
    if spec.unique:
        rows.append((gxe.ExpectColumnValuesToBeUnique, spec.name, {}))
    if spec.min is not None or spec.max is not None:
        rows.append(
            (gxe.ExpectColumnValuesToBeBetween, spec.name, {"min_value": spec.min, "max_value": spec.max})
        )
    if spec.allowed is not None:
        rows.append((gxe.ExpectColumnValuesToBeInSet, spec.name, {"value_set": list(spec.allowed)}))
    return rows


def _run_gx(pandas_frame, specs: list[ColumnSpec]) -> list[dict[str, Any]]:
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    logging.getLogger("great_expectations").setLevel(logging.ERROR)
    import great_expectations as gx

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = {"globally": False, "metric_calculations": False}
    asset = context.data_sources.add_pandas("frame").add_dataframe_asset("table")
    batch = asset.add_batch_definition_whole_dataframe("all").get_batch(
        batch_parameters={"dataframe": pandas_frame}
    )
    expectations = [
        cls(column=column, **kwargs) for spec in specs for cls, column, kwargs in _expectations_for(spec)
    ]
    outcome = batch.validate(gx.ExpectationSuite(name="table", expectations=expectations))
    return [_summarise(result) for result in outcome.results]


def _summarise(result) -> dict[str, Any]:
    config = result.expectation_config
    details = result.result or {}
    kwargs = {key: value for key, value in config.kwargs.items() if key not in ("batch_id", "column")}
    summary: dict[str, Any] = {
        "expectation": config.type,
        "column": config.kwargs.get("column"),
        "kwargs": kwargs,
        "success": bool(result.success),
    }
    if "unexpected_count" in details:
        summary["unexpected_count"] = int(details["unexpected_count"])
        summary["unexpected_examples"] = [
            _plain(value) for value in details.get("partial_unexpected_list", [])[:5]
        ]
    if "observed_value" in details:
        summary["observed"] = _plain(details["observed_value"])
    return summary


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and value != value:
        return "NaN"
    return value if isinstance(value, int | float | str | bool) or value is None else str(value)
