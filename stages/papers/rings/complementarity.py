"""Step `rings-complementarity`: feature vs graph geometry per dataset, graph metric and feature mode."""

from __future__ import annotations

from stages.core.context import StepContext
from stages.core.io import read_json, write_json, write_parquet
from stages.methods.graphs.complementarity import complementarity_results
from stages.methods.graphs.figures import plot_complementarity


def run(ctx: StepContext) -> None:
    """Measure complementarity (per-graph values kept) and write the table, its timings and the figure."""
    names = list(read_json(ctx.input("summary")))
    datasets = {name: ctx.input("datasets") / name for name in names}
    table = complementarity_results(datasets, ctx.params.audit, ctx.common.seed)
    write_parquet(table.drop("seconds"), ctx.output("complementarity"))
    timings = {f"{row['dataset']}/{row['metric']}": row["seconds"] for row in table.iter_rows(named=True)}
    write_json(timings, ctx.output("timings"))
    plot_complementarity(table, ctx.output("figure"))
