"""The KinDEL metrics of one model fit, as the official results script computes them.

- `test_mse`: mean squared error of the prediction vs `target_enrichment` on the test rows (DEL-Compose's
  score lives on another scale, so its MSE is reported but not comparable);
- held-out `−ρ`: minus Spearman's ρ between the prediction and the measured Kd (a higher score should mean a
  lower Kd), in four columns: in-library compounds (those with a `molecule_hash`) on- and off-DNA, and the
  extended sets (all compounds) on- and off-DNA;
- `test_rho_affinity` (simulated screens only): Spearman's ρ of the prediction with the hidden on-DNA
  affinity on the test rows.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from scipy import stats

from stages.methods.del_screens.files import Screen
from stages.methods.del_screens.schema import ENRICHMENT, KD

COLUMNS = ("in_library_ondna", "in_library_offdna", "extended_ondna", "extended_offdna")


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's ρ (NaN when either side is constant or fewer than 3 values)."""
    if len(a) < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(stats.spearmanr(a, b).statistic)


def heldout_scores(screen: Screen, predictions: pl.DataFrame) -> dict[str, float]:
    """−ρ(prediction, kd) in the four columns, from one fit's held-out predictions."""
    out = {}
    for kind in ("ondna", "offdna"):
        table = screen.heldout[kind]
        rows = predictions.filter(pl.col("set") == kind).sort("row")
        values = rows["prediction"].to_numpy()
        kd = table[KD].to_numpy()[rows["row"].to_numpy()]
        inside = table["molecule_hash"].is_not_null().to_numpy()[rows["row"].to_numpy()]
        out[f"in_library_{kind}"] = -spearman(values[inside], kd[inside])
        out[f"extended_{kind}"] = -spearman(values, kd)
    return out


def fit_scores(screen: Screen, truth: pl.DataFrame, predictions: pl.DataFrame) -> dict[str, float]:
    """Every metric of one (model, kind, split) fit."""
    test = predictions.filter(pl.col("set") == "test").sort("row")
    rows, values = test["row"].to_numpy(), test["prediction"].to_numpy()
    y = screen.library[ENRICHMENT].to_numpy()[rows]
    out = {"test_mse": float(np.mean((values - y) ** 2))}
    if truth.height:
        out["test_rho_affinity"] = spearman(values, truth["affinity_ondna"].to_numpy()[rows])
    return out | heldout_scores(screen, predictions)


def score_table(screen: Screen, truth: pl.DataFrame, predictions: pl.DataFrame) -> pl.DataFrame:
    """One row per (model, kind, split) with every metric as a column."""
    rows = []
    for (model, kind, split), group in predictions.group_by("model", "kind", "split", maintain_order=True):
        rows.append({"model": model, "kind": kind, "split": split, **fit_scores(screen, truth, group)})
    return pl.DataFrame(rows).sort("model", "kind", "split")
