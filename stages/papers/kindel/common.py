"""What the KinDEL training and evaluation steps share: reading the screen, the split rows, prediction rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from stages.methods.del_screens.files import Screen, read_folder
from stages.methods.del_screens.schema import HELDOUT_KINDS

PREDICTION_SCHEMA = {
    "model": pl.String,
    "kind": pl.String,
    "split": pl.Int64,
    "set": pl.String,
    "row": pl.Int64,
    "prediction": pl.Float64,
}


def load_screen(folder: Path, target: str) -> Screen:
    """The screen the library step wrote (already validated there)."""
    screen, _ = read_folder(folder, target, check=False)
    return screen


def split_rows(screen: Screen, kind: str, split: int) -> dict[str, np.ndarray]:
    """Row indices of train / valid / test in column `split{split}` of the `kind` split table."""
    labels = screen.splits[kind][f"split{split}"].to_numpy()
    return {part: np.flatnonzero(labels == part) for part in ("train", "valid", "test")}


def prediction_rows(
    model: str, kind: str, split: int, test_rows: np.ndarray, predictions: dict
) -> pl.DataFrame:
    """Long-format rows: the test predictions and each held-out table's."""
    frames = [_rows(model, kind, split, "test", test_rows, predictions["test"])]
    for heldout in HELDOUT_KINDS:
        values = predictions[heldout]
        frames.append(_rows(model, kind, split, heldout, np.arange(len(values)), values))
    return pl.concat(frames)


def _rows(model: str, kind: str, split: int, part: str, rows: np.ndarray, values: np.ndarray) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "model": [model] * len(rows),
            "kind": [kind] * len(rows),
            "split": [split] * len(rows),
            "set": [part] * len(rows),
            "row": rows.astype(np.int64),
            "prediction": np.asarray(values, dtype=np.float64),
        },
        schema=PREDICTION_SCHEMA,
    )
