"""Per-class pick counts of every core-set, and where MRMC's class skew comes from.

`class_counts` counts each core-set's picks per class (0 for a class it leaves out). Two references sit beside
the trained methods' rows, as untrained rows (`REFERENCE_PREFIX`), to tell the method's skew from a defect:

- `ref:unofficial_rule`: the unofficial code's rule (FatemeBameri/subset-selection-algorithms, `MRMC.py`) on the
  same φ and embeddings: C′ = top ⌊ρ·|C|⌋ by φ; a linear regression of φ on the embeddings fitted on C′ (the
  least-squares solution its 200 Adam epochs approach); the rest by φ · exp(−|pred − φ|)^γ. No class term.
- `ref:phi_share`: the budget split over classes in proportion to each class's total positive φ — the counts a
  selector that only follows φ mass would give, with no ranking inside classes;
- `ref:c_prime`: MRMC-R's C′ itself, the top ⌊ρ·|C|⌋ by φ on which θ′ is fitted (without class quotas): a
  class C′ barely holds gets a low φ_reg (0 if C′ lacks it), so MRMC-R's fill favours it.

`phi_by_class` gives each class's mean φ per seed: the loss reduction the decay fit credits it with.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from stages.core.metrics import new_figure, save_figure
from stages.methods.selection.coreset import top_by_score
from stages.methods.selection.mrmc import MRMCOptions

REFERENCE_PREFIX = "ref:"
UNOFFICIAL = f"{REFERENCE_PREFIX}unofficial_rule"
PHI_SHARE = f"{REFERENCE_PREFIX}phi_share"
C_PRIME = f"{REFERENCE_PREFIX}c_prime"
REFERENCES = (UNOFFICIAL, PHI_SHARE, C_PRIME)
COUNT_SCHEMA = {
    "method": pl.Utf8,
    "budget": pl.Float64,
    "seed": pl.Int64,
    "label": pl.Int64,
    "count": pl.Int64,
}


def class_counts(selections: pl.DataFrame, pool: pl.DataFrame) -> pl.DataFrame:
    """Picks per (method, budget, seed, class), with 0 for a class a core-set leaves out."""
    labels = pool.select("sample_id", pl.col("label").cast(pl.Int64))
    runs = selections.select("method", "budget", "seed").unique()
    grid = runs.join(labels.select("label").unique(), how="cross")
    counted = (
        selections.join(labels, on="sample_id").group_by(["method", "budget", "seed", "label"]).len("count")
    )
    return (
        grid.join(counted, on=["method", "budget", "seed", "label"], how="left")
        .with_columns(pl.col("count").fill_null(0).cast(pl.Int64))
        .select(list(COUNT_SCHEMA))
        .sort(["method", "budget", "seed", "label"])
    )


def unofficial_rule(
    phi: np.ndarray, features: np.ndarray, budget: int, rho: float, gamma: float
) -> np.ndarray:
    """The unofficial code's fill rule on our φ: top ⌊ρ·budget⌋ by φ, the rest by φ·exp(−|pred − φ|)^γ."""
    core = top_by_score(phi, int(rho * budget))
    mean, std = features.mean(axis=0), features.std(axis=0)
    design = np.column_stack([(features - mean) / np.where(std > 1e-12, std, 1.0), np.ones(len(phi))])
    weights, *_ = np.linalg.lstsq(design[core], phi[core], rcond=None)
    fill = phi * np.exp(-np.abs(design @ weights - phi)) ** gamma
    fill[core] = np.inf
    return top_by_score(fill, budget)


def phi_share_counts(phi: np.ndarray, labels: np.ndarray, budget: int) -> dict[int, int]:
    """The budget split over classes in proportion to each class's positive φ mass (largest remainders)."""
    classes = np.unique(labels)
    mass = np.array([np.clip(phi[labels == label], 0, None).sum() for label in classes])
    exact = budget * mass / mass.sum() if mass.sum() > 0 else np.full(len(classes), budget / len(classes))
    counts = np.floor(exact).astype(np.int64)
    counts[np.argsort(-(exact - counts), kind="stable")[: budget - counts.sum()]] += 1
    return {int(label): int(count) for label, count in zip(classes, counts, strict=True)}


def reference_counts(
    phi: np.ndarray, features: np.ndarray, labels: np.ndarray, budget: int, options: MRMCOptions
) -> dict[str, dict[int, int]]:
    """Per reference rule, the picks per class at one budget (see the module docstring)."""
    classes = np.unique(labels)

    def per_class(picked: np.ndarray) -> dict[int, int]:
        return {int(label): int(np.sum(labels[picked] == label)) for label in classes}

    return {
        UNOFFICIAL: per_class(unofficial_rule(phi, features, budget, options.rho, options.gamma)),
        PHI_SHARE: phi_share_counts(phi, labels, budget),
        C_PRIME: per_class(top_by_score(phi, int(options.rho * budget))),
    }


def reference_rows(seed: int, budget: float, counts: dict[str, dict[int, int]]) -> pl.DataFrame:
    """Rows of the class-count table for the reference rules of one seed and budget."""
    rows = [
        (method, budget, seed, label, count)
        for method, per_class in counts.items()
        for label, count in per_class.items()
    ]
    return pl.DataFrame(rows, schema=COUNT_SCHEMA, orient="row")


def phi_by_class(phi: np.ndarray, labels: np.ndarray, seed: int) -> pl.DataFrame:
    """Mean φ per class of one seed."""
    return (
        pl.DataFrame({"seed": seed, "label": labels.astype(np.int64), "phi": phi.astype(np.float64)})
        .group_by(["seed", "label"])
        .agg(pl.col("phi").mean().alias("mean_phi"))
        .sort(["seed", "label"])
    )


def plot_class_counts(counts: pl.DataFrame, phi: pl.DataFrame, methods: list[str], path: Path) -> None:
    """One panel per budget: mean picks per class over seeds (min–max bars) per method, the even share dashed;
    a last panel: each class's mean φ (mean over seeds)."""
    budgets = sorted(counts["budget"].unique())
    figure, axes = new_figure(4.2 * (len(budgets) + 1), 3.8, ncols=len(budgets) + 1)
    n_classes = counts["label"].n_unique()
    for axis, budget in zip(axes, budgets, strict=False):
        at = counts.filter(pl.col("budget") == budget)
        for method in methods:
            rows = (
                at.filter(pl.col("method") == method)
                .group_by("label")
                .agg(
                    pl.col("count").mean().alias("mean"),
                    pl.col("count").min().alias("lo"),
                    pl.col("count").max().alias("hi"),
                )
                .sort("label")
            )
            if rows.height == 0:
                continue
            style = "--" if method.startswith(REFERENCE_PREFIX) else "-"
            spread = [rows["mean"] - rows["lo"], rows["hi"] - rows["mean"]]
            axis.errorbar(
                rows["label"], rows["mean"], yerr=spread, marker="o", markersize=3, capsize=2, linestyle=style
            )
            axis.lines[-1].set_label(method)
        size = at.group_by(["method", "seed"]).agg(pl.col("count").sum())["count"].max()
        axis.axhline(size / n_classes, color="black", linestyle=":", label="even share")
        axis.set_title(f"picks per class at {budget:.0%}")
        axis.set_xlabel("class")
        axis.set_xticks(range(n_classes))
        axis.grid(alpha=0.3)
    axes[0].set_ylabel("core-set samples (mean over seeds; bars: min–max)")
    axes[0].legend(fontsize=6)
    mean_phi = phi.group_by("label").agg(pl.col("mean_phi").mean()).sort("label")
    axes[-1].bar(mean_phi["label"], mean_phi["mean_phi"], color="grey")
    axes[-1].set_title("mean φ per class (loss reduction)")
    axes[-1].set_xlabel("class")
    axes[-1].set_xticks(range(n_classes))
    save_figure(figure, path)
