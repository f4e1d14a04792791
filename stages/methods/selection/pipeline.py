"""`coreset-select`: the static core-set selector as a DVC stage on any classification table (params `coreset:`)."""

from __future__ import annotations

from stages.core.io import read_parquet, write_json, write_parquet
from stages.core.steps import Pipeline, Step, StepContext
from stages.methods.selection.table_selection import TableSelectionParams, select_from_table


def run(ctx: StepContext) -> None:
    """Select from `coreset.input` and write the chosen ids, the validation report and a summary."""
    source = str(ctx.input("table"))
    selection = select_from_table(read_parquet(source), ctx.params, source)
    ctx.log(f"{selection.summary['selected']} of {selection.summary['pool_size']} rows selected")
    write_parquet(selection.chosen, ctx.output("selection"))
    write_json(selection.report.to_dict(), ctx.output("validation"))
    write_json({k: v for k, v in selection.summary.items() if k != "seconds"}, ctx.output("summary"))


PIPELINE = Pipeline(
    id="coreset",
    params_section="coreset",
    params_model=TableSelectionParams,
    steps=(
        Step(
            name="select",
            run=run,
            deps={"table": "${coreset.input}"},
            outs={
                "selection": "data/coreset/selection.parquet",
                "validation": "data/coreset/validation.json",
                "summary": "data/coreset/summary.json",
            },
            params=("coreset",),
            code=("stages/methods/selection", "stages/models"),
            description="select a core-set from any validated classification table",
        ),
    ),
)
