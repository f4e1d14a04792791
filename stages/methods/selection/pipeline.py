"""`coreset-select`: the static core-set selector as a DVC stage on any classification table (params `coreset:`)."""

from __future__ import annotations

from stages.core.steps import Catalog, Pipeline, Step

DATA = Catalog(
    "data/coreset", selection="selection.parquet", validation="validation.json", summary="summary.json"
)

PIPELINE = Pipeline(
    id="coreset",
    package="stages.methods.selection",
    params_section="coreset",
    params_model="stages.methods.selection.table_selection:TableSelectionParams",
    steps=(
        Step(
            name="select",
            run="stages.methods.selection.coreset_stage:run",
            deps={"table": "${coreset.input}"},
            outs=DATA.pick("selection", "validation", "summary"),
            params=("coreset",),
            description="select a core-set from any validated classification table",
        ),
    ),
)
