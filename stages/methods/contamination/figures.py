"""Figures of an assessment: fidelity against resistance (vanilla marked), accuracy change against fidelity
(questions flipped that aggregate accuracy does not show)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from stages.core.metrics import new_figure, save_figure


def fidelity_resistance_png(rows: Sequence[dict], path: str | Path, title: str) -> None:
    """One point per strategy with its intervals; vanilla drawn as the horizontal reference line."""
    figure, axis = new_figure(6.2, 4.6)
    for row in rows:
        if row["strategy"] == "vanilla":
            axis.axhline(
                row["resistance"], color="black", linestyle="--", linewidth=1, label="vanilla resistance"
            )
            continue
        colour = "tab:red" if row.get("category") == "altering" else "tab:blue"
        axis.errorbar(
            row["fidelity"],
            row["resistance"],
            xerr=[[row["fidelity"] - row["fidelity_low"]], [row["fidelity_high"] - row["fidelity"]]],
            yerr=[[row["resistance"] - row["resistance_low"]], [row["resistance_high"] - row["resistance"]]],
            fmt="o",
            color=colour,
            capsize=2,
        )
        axis.annotate(
            row["strategy"],
            (row["fidelity"], row["resistance"]),
            fontsize=7,
            xytext=(3, 3),
            textcoords="offset points",
        )
    axis.set_xlabel("fidelity (clean model: original vs updated)")
    axis.set_ylabel("resistance (updated: clean vs contaminated)")
    axis.set_title(title, fontsize=9)
    axis.legend(fontsize=7, loc="lower left")
    save_figure(figure, path)


def accuracy_fidelity_png(rows: Sequence[dict], path: str | Path, title: str) -> None:
    """Δ accuracy of the clean model against 1 − fidelity: points above |Δ| are questions flipped both ways."""
    figure, axis = new_figure(6.2, 4.6)
    top = 0.05
    for row in rows:
        if row["strategy"] == "vanilla":
            continue
        changed = 1 - row["fidelity"]
        top = max(top, changed)
        colour = "tab:red" if row.get("category") == "altering" else "tab:blue"
        axis.scatter(row["delta_accuracy"], changed, color=colour)
        axis.annotate(
            row["strategy"],
            (row["delta_accuracy"], changed),
            fontsize=7,
            xytext=(3, 3),
            textcoords="offset points",
        )
    span = [-top, 0, top]
    axis.plot(
        span, [abs(x) for x in span], color="grey", linestyle=":", label="flips = |Δ accuracy| (one-way)"
    )
    axis.set_xlabel("Δ accuracy of the clean model (updated − original)")
    axis.set_ylabel("share of questions flipped (1 − fidelity)")
    axis.set_title(title, fontsize=9)
    axis.legend(fontsize=7)
    save_figure(figure, path)
