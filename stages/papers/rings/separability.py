"""Step `rings-separability`: permutation tests between modes, per dataset and model; score and p-value figures."""

from __future__ import annotations

import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_parquet, write_json, write_parquet
from stages.methods.graphs.figures import plot_p_values, plot_scores
from stages.methods.graphs.separability import separability_results, separable_pairs


def run(ctx: StepContext) -> None:
    """Test the mode pairs, write the table, a separable/not summary and the figures."""
    runs = read_parquet(ctx.input("runs"))
    config = ctx.params.audit
    results = separability_results(runs, config, ctx.common.seed)
    write_parquet(results, ctx.output("separability"))
    pairs = separable_pairs(results)
    summary = {
        f"{row['dataset']}/{row['model']}/{row['mode_a']}~{row['mode_b']}": {
            "separable": row["separable"], "p_ks": row["p_ks"], "p_wilcoxon": row["p_wilcoxon"]
        }
        for row in pairs.iter_rows(named=True)
    }  # fmt: skip
    write_json(summary, ctx.output("metrics"))
    separable = pairs.filter(pl.col("separable") & (pl.col("model") == "gnn")).height
    ctx.log(f"{separable} of {pairs.filter(pl.col('model') == 'gnn').height} GNN mode pairs separable")
    plot_scores(runs, config.modes, config.metric, ctx.output("scores_figure"))
    plot_p_values(results, ctx.output("p_values_figure"))
