"""Step `bronet-figures`: certified accuracy against ε per conv × loss (mean over seeds), the distribution of
true-class radii under LA and CE + CR, activation memory per layer type; `metrics.json` (clean / certified
accuracy and ACR per conv × loss and per rank) and the DVC plot data."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.context import StepContext
from stages.core.io import read_json, read_parquet
from stages.core.metrics import new_figure, save_figure, write_metrics, write_plot_data
from stages.papers.bronet.params import BRONetParams

EPSILON_GRID = np.round(np.arange(0, 151, 6) / 255, 6)
COLUMNS = ("clean", "cert_36", "cert_72", "cert_108", "acr")


def curves(items: pl.DataFrame, runs: pl.DataFrame) -> pl.DataFrame:
    """Certified accuracy at every ε of the grid per (conv, loss), averaged over the grid's seeds."""
    rows = []
    grid = runs.filter(pl.col("track") == "grid")
    for (conv, loss), group in grid.group_by("conv", "loss", maintain_order=True):
        frame = items.filter(pl.col("label").is_in(group["label"].to_list()))
        correct, radius = frame["correct"].to_numpy(), frame["radius"].to_numpy()
        for eps in EPSILON_GRID:
            accuracy = float(np.mean(correct & (radius > eps))) if eps > 0 else float(correct.mean())
            rows.append(
                {"series": f"{conv}/{loss}", "epsilon": float(eps), "certified_accuracy": round(accuracy, 6)}
            )
    return pl.DataFrame(rows).sort("series", "epsilon")


def table(runs: pl.DataFrame, track: str, keys: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """Means over seeds of the accuracy columns, keyed by the joined `keys` (e.g. `bro/la`)."""
    chosen = runs.filter(pl.col("track") == track)
    summary = chosen.group_by(*keys).agg(
        *[pl.col(column).mean().round(4) for column in COLUMNS], pl.len().alias("seeds")
    )
    return {
        "/".join(str(row[key]) for key in keys): {column: row[column] for column in (*COLUMNS, "seeds")}
        for row in summary.sort(*keys).to_dicts()
    }


def run(ctx: StepContext) -> None:
    params: BRONetParams = ctx.params
    runs, items, layers = (
        read_parquet(ctx.input("runs")),
        read_parquet(ctx.input("items")),
        read_json(ctx.input("layers")),
    )
    folder = ctx.output("figures")
    folder.mkdir(parents=True)
    lines = curves(items, runs)
    figure, axis = new_figure()
    colours = {conv: f"C{index}" for index, conv in enumerate(params.grid.convs)}
    for series in lines["series"].unique(maintain_order=True).to_list():
        part = lines.filter(pl.col("series") == series)
        conv, loss = series.split("/")
        style = "-" if loss == "la" else "--"
        axis.plot(part["epsilon"] * 255, part["certified_accuracy"], style, color=colours[conv], label=series)
    axis.set(
        xlabel="ε × 255 (l2)",
        ylabel="certified accuracy",
        title=f"Fashion-MNIST LipConvNet-5-{params.grid.width}",
    )
    axis.legend(fontsize=7)
    save_figure(figure, folder / "certified_accuracy.png")

    grid = runs.filter(pl.col("track") == "grid")
    figure, axes = new_figure(9, 3.2, ncols=len(params.grid.convs))
    for axis, conv in zip(np.atleast_1d(axes), params.grid.convs, strict=True):
        for loss in params.grid.losses:
            labels = grid.filter((pl.col("conv") == conv) & (pl.col("loss") == loss))["label"].to_list()
            radii = items.filter(pl.col("label").is_in(labels))["label_radius"].to_numpy()
            axis.hist(radii, bins=40, alpha=0.5, label=loss, density=True)
        axis.set(title=conv, xlabel="true-class radius")
        axis.legend(fontsize=7)
    save_figure(figure, folder / "radius_distribution.png")

    memory = pl.DataFrame(layers["memory"])
    figure, axis = new_figure()
    widths = sorted(memory["width"].unique().to_list())
    for offset, conv in enumerate(("bro", "cayley", "soc")):
        values = memory.filter(pl.col("conv") == conv).sort("width")["saved_bytes"].to_numpy() / 2**20
        axis.bar(np.arange(len(widths)) + 0.27 * (offset - 1), values, width=0.27, label=conv)
    axis.set_xticks(range(len(widths)), [str(width) for width in widths])
    axis.set(
        xlabel="channels (c → c, 3 × 3, 16 × 16)", ylabel="MiB saved for backward", title="memory per layer"
    )
    axis.legend()
    save_figure(figure, folder / "memory_per_layer.png")

    write_plot_data(lines, ctx.output("plot_data"))
    write_metrics(
        {
            "grid": table(runs, "grid", ("conv", "loss")),
            "rank_sweep": table(runs, "rank", ("rank",)),
        },
        ctx.output("metrics"),
    )
