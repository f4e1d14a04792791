"""The datasets of the sharpening pipeline: 2-class subsets of an image source and synthetic X with a set
spectrum, each a named subset of one long table (one row per sample, features as a float list)."""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.errors import PipelineError
from stages.core.seeding import derive_seed


def real_name(n: int, seed: int) -> str:
    return f"real-n{n}-s{seed}"


def synthetic_name(difficulty: float, seed: int) -> str:
    return f"synthetic-q{difficulty:g}-s{seed}"


def two_class_subset(
    table: pl.DataFrame, classes: tuple[int, int], n: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first `n` train rows of the two classes in the seed's order: pixels/255, labels +1 (classes[0]) / −1,
    ids. The order is one permutation per seed, so a seed's subsets are nested (N = 50 ⊂ 100 ⊂ 200) and a
    difference between two N is paired on shared rows."""
    rows = table.filter((pl.col("split") == "train") & pl.col("label").is_in(list(classes))).sort("sample_id")
    if rows.height < n:
        raise PipelineError(
            f"sharpening.classes {list(classes)}: only {rows.height} train rows, n = {n} asked"
        )
    order = np.random.default_rng(derive_seed(seed, "sharpening-subset")).permutation(rows.height)
    chosen = rows[np.sort(order[:n])]
    features = np.stack(chosen["features"].to_numpy()).astype(np.float64) / 255.0
    labels = np.where(chosen["label"].to_numpy() == classes[0], 1.0, -1.0)
    return features, labels, chosen["sample_id"].to_numpy()


def synthetic_dataset(
    n: int, dim: int, condition: float, difficulty: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """X = U diag(σ) Vᵀ (random orthonormal U, V; σ geometric from 1 to 1/√condition), y = ±1 at random, then X
    scaled by c so that Q = ‖X⁺y‖² = `difficulty` exactly (Q scales as 1/c²)."""
    rng = np.random.default_rng(derive_seed(seed, "sharpening-synthetic", n, dim))
    left = np.linalg.qr(rng.standard_normal((n, n)))[0]
    right = np.linalg.qr(rng.standard_normal((dim, n)))[0]
    sigma = condition ** (-0.5 * np.arange(n) / max(n - 1, 1))
    y = rng.choice([-1.0, 1.0], size=n)
    x = (left * sigma) @ right.T
    raw = float(np.sum((left.T @ y) ** 2 / sigma**2))
    return x * np.sqrt(raw / difficulty), y


def subset_frame(
    name: str, kind: str, seed: int, x: np.ndarray, y: np.ndarray, ids: np.ndarray | None = None
) -> pl.DataFrame:
    """One subset as rows of the long table."""
    return pl.DataFrame(
        {
            "subset": [name] * len(y),
            "kind": [kind] * len(y),
            "seed": [seed] * len(y),
            "row": np.arange(len(y)),
            "sample_id": ids if ids is not None else np.arange(len(y)),
            "target": y,
            "features": [row for row in x],
        },
        schema_overrides={"features": pl.List(pl.Float64), "sample_id": pl.Int64},
    )


def load_subset(subsets: pl.DataFrame, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of one named subset."""
    rows = subsets.filter(pl.col("subset") == name).sort("row")
    if rows.height == 0:
        raise PipelineError(f"subsets.parquet has no subset {name!r}; rerun sharpening-prepare")
    return np.stack(rows["features"].to_numpy()), rows["target"].to_numpy()
