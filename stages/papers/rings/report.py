"""Step `rings-report`: verdict per dataset, ranking, and the Markdown dataset-quality report."""

from __future__ import annotations

from stages.core.context import StepContext
from stages.core.io import read_json, read_parquet, write_json, write_parquet, write_text
from stages.methods.graphs.figures import FIGURE_FILES
from stages.methods.graphs.report import quality_report
from stages.methods.graphs.verdicts import dataset_verdicts


def run(ctx: StepContext) -> None:
    """Rank the datasets and write verdicts and report.md (figures linked relative to data/rings)."""
    config = ctx.params.audit
    runs = read_parquet(ctx.input("runs"))
    separability = read_parquet(ctx.input("separability"))
    verdicts = dataset_verdicts(separability, runs, config.metric)
    summaries = {
        name: {key: value for key, value in entry.items() if key != "source"}
        for name, entry in read_json(ctx.input("summary")).items()
    }
    text = quality_report(
        summaries,
        runs,
        separability,
        read_parquet(ctx.input("complementarity")),
        verdicts,
        config,
        FIGURE_FILES,
    )
    write_parquet(verdicts, ctx.output("verdicts"))
    write_json({row["dataset"]: row for row in verdicts.iter_rows(named=True)}, ctx.output("metrics"))
    write_text(text, ctx.output("report"))
    for row in verdicts.iter_rows(named=True):
        ctx.log(f"#{row['rank']} {row['dataset']}: {row['category']}")
