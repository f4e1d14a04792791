"""The `data-<name>` step of a classification source: load, validate (GX), write the table and its report."""

from __future__ import annotations

from stages.core.context import StepContext
from stages.core.io import file_md5, write_json, write_parquet
from stages.core.validate import ensure_valid
from stages.datasets.classification import check_usable
from stages.datasets.registry import get_source


def run(ctx: StepContext, source: str) -> None:
    """Materialise `source` into `table.parquet` + `validation.json` (with provenance by file name, md5)."""
    params = getattr(ctx.common.datasets, source)
    definition = get_source(source)
    table = definition.load(params)
    provenance = {
        "dataset": source,
        "description": definition.description,
        "rows": table.height,
        "files": {path.name: file_md5(path) for path in definition.files(params)},  # names: location-free
    }
    report = ensure_valid(table, definition.schema, source)
    files = ", ".join(str(path) for path in definition.files(params))
    check_usable(table, f"dataset '{source}'" + (f" ({files})" if files else ""))
    ctx.log(f"{table.height} rows validated")
    extra = {"provenance": provenance}
    if definition.describe is not None:
        extra["read_as"] = definition.describe(params)
        columns = extra["read_as"]["columns"]
        ctx.log(f"label column {columns['label_column']}, {columns['n_features']} feature column(s)")
        for note in extra["read_as"]["labels"]["notes"]:
            ctx.log(f"note: {note}")
    write_parquet(table, ctx.output("table"))
    write_json(report.to_dict() | extra, ctx.output("validation"))
