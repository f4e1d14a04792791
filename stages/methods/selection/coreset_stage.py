"""Step `coreset-select`: the static core-set selector on any classification table (params `coreset:`)."""

from __future__ import annotations

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_json, write_parquet
from stages.methods.selection.table_selection import select_from_table


def run(ctx: StepContext) -> None:
    """Select from `coreset.input` and write the chosen ids, the validation report and a summary."""
    source = str(ctx.input("table"))
    selection = select_from_table(read_parquet(source), ctx.params, source)
    ctx.log(f"{selection.summary['selected']} of {selection.summary['pool_size']} rows selected")
    write_parquet(selection.chosen, ctx.output("selection"))
    write_json(selection.report.to_dict(), ctx.output("validation"))
    write_json({k: v for k, v in selection.summary.items() if k != "seconds"}, ctx.output("summary"))
