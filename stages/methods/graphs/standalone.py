"""A one-shot audit of your own graph datasets (what `icml25 audit-graphs` runs), outside the DVC pipeline.

Writes, into one output folder and only when the whole audit succeeded: the validated graph tables, their
summaries with the label mapping (`datasets.json`), runs, separability and complementarity tables, verdicts,
figures and `report.md`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from stages.core.io import OutputTransaction, ensure_replaceable, write_json, write_parquet, write_text
from stages.datasets.graphs.table import GraphTables, validate_graph_tables, write_graph_tables
from stages.methods.graphs.audit import split_timings, train_runs
from stages.methods.graphs.complementarity import complementarity_results
from stages.methods.graphs.config import AuditConfig
from stages.methods.graphs.figures import FIGURE_FILES, plot_complementarity, plot_p_values, plot_scores
from stages.methods.graphs.report import quality_report
from stages.methods.graphs.separability import separability_results
from stages.methods.graphs.verdicts import dataset_verdicts


def audit_graph_datasets(
    datasets: Mapping[str, GraphTables], config: AuditConfig, seed: int, output: str | Path
) -> Path:
    """Validate, perturb, train, test and report; returns the path of the Markdown report."""
    output = Path(output)
    ensure_replaceable(output)  # before hours of training, not after
    output.parent.mkdir(parents=True, exist_ok=True)
    with OutputTransaction(output.parent, owner="icml25 audit-graphs") as transaction:
        staged = transaction.path(output)
        folders = {}
        for name, tables in datasets.items():
            folders[name] = staged / "datasets" / name
            write_graph_tables(tables, folders[name], validate_graph_tables(tables, name))
        runs, timings = split_timings(train_runs(folders, config))
        write_json(timings, staged / "timings.json")
        separability = separability_results(runs, config, seed)
        complementarity = complementarity_results(folders, config, seed)
        verdicts = dataset_verdicts(separability, runs, config.metric)
        for name, frame in (("runs", runs), ("separability", separability), ("verdicts", verdicts)):
            write_parquet(frame, staged / f"{name}.parquet")
        write_parquet(complementarity.drop("seconds"), staged / "complementarity.parquet")
        write_json({row["dataset"]: row for row in verdicts.iter_rows(named=True)}, staged / "verdicts.json")
        plot_scores(runs, config.modes, config.metric, staged / FIGURE_FILES["scores per mode"])
        plot_p_values(separability, staged / FIGURE_FILES["separability p-values"])
        plot_complementarity(complementarity, staged / FIGURE_FILES["complementarity"])
        summaries = {name: tables.summary() for name, tables in datasets.items()}
        write_json(summaries, staged / "datasets.json")  # counts and each label mapping (raw → internal)
        text = quality_report(summaries, runs, separability, complementarity, verdicts, config, FIGURE_FILES)
        write_text(text, staged / "report.md")
    return output / "report.md"
