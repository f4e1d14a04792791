"""Step `rings-prepare`: gather the audited graph datasets from their shared `data-<name>` stages."""

from __future__ import annotations

import shutil

from stages.core.context import StepContext
from stages.core.io import read_json, write_json


def run(ctx: StepContext) -> None:
    """Copy each listed source's validated graph tables; their summaries (with provenance) go to datasets.json."""
    folder = ctx.output("datasets")
    summaries = {}
    for name in ctx.params.datasets:
        shutil.copytree(ctx.input(f"source_{name}"), folder / name)
        summaries[name] = read_json(ctx.input(f"summary_{name}"))
        ctx.log(f"{name}: {summaries[name]['graphs']} graphs")
    write_json(summaries, ctx.output("summary"))
