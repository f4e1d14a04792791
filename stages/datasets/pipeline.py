"""The shared dataset stages `data-<name>`: materialise a raw source into a validated Parquet table."""

from __future__ import annotations

from stages.common import CommonParams
from stages.core.io import file_md5, write_json, write_parquet
from stages.core.steps import Pipeline, Step, StepContext
from stages.core.validate import ensure_valid
from stages.datasets.sources import SOURCES


def make_run(name: str):
    """The step function of source `name`."""

    def run(ctx: StepContext) -> None:
        params = getattr(ctx.common.datasets, name)
        source = SOURCES.get(name)
        table = source.load(params)
        provenance = {
            "dataset": name,
            "description": source.description,
            "rows": table.height,
            "files": {
                path.name: file_md5(path) for path in source.files(params)
            },  # names: location-independent
        }
        report = ensure_valid(table, source.schema, name)
        ctx.log(f"{table.height} rows validated")
        write_parquet(table, ctx.output("table"))
        write_json(report.to_dict() | {"provenance": provenance}, ctx.output("validation"))

    return run


STEPS = tuple(
    Step(
        name=name,
        run=make_run(name),
        deps=SOURCES.get(name).deps,
        outs={"table": f"data/raw/{name}/table.parquet", "validation": f"data/raw/{name}/validation.json"},
        params=(f"common.datasets.{name}",),
        code=("stages/datasets",),
        description=SOURCES.get(name).description,
    )
    for name in SOURCES.names()
)

PIPELINE = Pipeline(id="data", params_section="common", params_model=CommonParams, steps=STEPS)
