"""Step `bdc-figures`: the strategy × recipe × benchmark table (accuracy, fidelity, resistance, gain over vanilla,
with paired bootstrap intervals over questions), utility accuracies, the figures and the DVC plot data."""

from __future__ import annotations

import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_parquet
from stages.core.metrics import write_metrics, write_plot_data
from stages.methods.contamination.figures import accuracy_fidelity_png, fidelity_resistance_png
from stages.papers.bdc.analysis import RECIPES, summary_table, utility_table
from stages.papers.bdc.params import BDCParams


def run(ctx: StepContext) -> None:
    params: BDCParams = ctx.params
    correctness = read_parquet(ctx.input("correctness"))
    table = summary_table(
        correctness, params.benchmarks, params.strategies, params.claims.bootstrap, params.claims.confidence
    )
    write_parquet(table, ctx.output("table"))
    folder = ctx.output("figures")
    for benchmark in params.benchmarks:
        for recipe in RECIPES:
            rows = table.filter((pl.col("benchmark") == benchmark) & (pl.col("recipe") == recipe)).to_dicts()
            title = f"{benchmark}, {recipe} contamination ({rows[0]['questions']} questions × {rows[0]['seeds']} seeds)"
            fidelity_resistance_png(rows, folder / f"fidelity_resistance_{benchmark}_{recipe}.png", title)
        rows = table.filter((pl.col("benchmark") == benchmark) & (pl.col("recipe") == "intensive")).to_dicts()
        accuracy_fidelity_png(
            rows, folder / f"accuracy_vs_fidelity_{benchmark}.png", f"{benchmark}: clean model"
        )
    utility = utility_table(correctness)
    write_metrics(
        {
            "table": {
                f"{r['benchmark']}/{r['recipe']}/{r['strategy']}": {
                    key: round(r[key], 4)
                    for key in (
                        "accuracy_clean",
                        "accuracy_contaminated",
                        "fidelity",
                        "resistance",
                        "resistance_gain",
                    )
                }
                for r in table.iter_rows(named=True)
            },
            "utility": {
                f"{r['benchmark']}/{r['model']}": round(r["accuracy"], 4)
                for r in utility.iter_rows(named=True)
            },
        },
        ctx.output("metrics"),
    )
    write_plot_data(
        table.select("benchmark", "recipe", "strategy", "fidelity", "resistance").sort(
            "benchmark", "recipe", "strategy"
        ),
        ctx.output("plot_data"),
    )
    ctx.log(f"table of {table.height} rows; figures in {folder}")
