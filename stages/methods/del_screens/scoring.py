"""Score your own library: a model trained on a KinDEL folder's screen ranks the SMILES of your table.

The model is fit on the training rows of `split1` of the folder's random split (the DNN and DEL-Compose stop
on its valid rows); its test MSE and Spearman ρ with `target_enrichment` on the test rows are reported with
the scores, so you see how well it ranks compounds of that screen before trusting it on yours.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
from scipy import stats

from stages.core.errors import DataValidationError
from stages.methods.del_screens import compose
from stages.methods.del_screens.baselines import REGRESSORS
from stages.methods.del_screens.config import ComposeOptions
from stages.methods.del_screens.files import read_folder
from stages.methods.del_screens.fingerprints import morgan_smiles
from stages.methods.del_screens.schema import ENRICHMENT

COMPOSE_MODELS = ("compose_full", "compose_factorized")


def read_smiles_table(path: str | Path, column: str = "smiles") -> pl.DataFrame:
    """Your CSV or Parquet table; a missing SMILES column is an error naming it and the file."""
    path = Path(path)
    if not path.is_file():
        raise DataValidationError(f"{path}: file not found")
    table = (
        pl.read_parquet(path) if path.suffix == ".parquet" else pl.read_csv(path, infer_schema_length=None)
    )
    if column not in table.columns:
        raise DataValidationError(f"{path}: no column {column!r} (columns: {', '.join(table.columns)})")
    return table


def _fit_predict(model: str, screen, rows: dict, smiles: list[str], where: str, seed: int):
    library = screen.library
    if model in COMPOSE_MODELS:
        options = ComposeOptions(variant=model.removeprefix("compose_"))
        data = compose.featurise(library, options)
        fitted = compose.fit(options, data.take(rows["train"]), data.take(rows["valid"]), seed)
        mine = pl.DataFrame({"smiles": smiles}).with_columns(
            *(pl.lit(1.0).alias(c) for c in compose.LOAD_AND_COUNTS), pl.lit(0.0).alias(ENRICHMENT)
        )
        return fitted.score(data.take(rows["test"])), fitted.score(compose.featurise(mine, options, where))
    regressor = REGRESSORS.build(model, {}, key=f"model {model}")
    features = morgan_smiles(library["smiles"].to_list(), where="library")
    y = library[ENRICHMENT].to_numpy()
    regressor.fit(features[rows["train"]], y[rows["train"]], features[rows["valid"]], y[rows["valid"]], seed)
    return regressor.predict(features[rows["test"]]), regressor.predict(morgan_smiles(smiles, where=where))


def score_file(
    folder: str | Path,
    target: str,
    input_path: str | Path,
    output_path: str | Path,
    model: str = "rf",
    smiles_column: str = "smiles",
    seed: int = 0,
) -> dict:
    """Train `model` (rf, xgboost, knn, dnn, compose_full, compose_factorized) on the folder's screen, write
    your table with a `score` column (higher: predicted stronger binder) and return a summary."""
    if model not in REGRESSORS and model not in COMPOSE_MODELS:
        raise ValueError(
            f"unknown model {model!r}; choose from {', '.join([*REGRESSORS.names(), *COMPOSE_MODELS])}"
        )
    table = read_smiles_table(input_path, smiles_column)
    screen, _ = read_folder(folder, target)
    labels = screen.splits["random"]["split1"].to_numpy()
    rows = {part: np.flatnonzero(labels == part) for part in ("train", "valid", "test")}
    test_prediction, scores = _fit_predict(
        model, screen, rows, table[smiles_column].to_list(), f"{input_path} ({smiles_column})", seed
    )
    y_test = screen.library[ENRICHMENT].to_numpy()[rows["test"]]
    out = table.with_columns(pl.Series("score", np.asarray(scores, dtype=float)))
    output_path = Path(output_path)
    output_path.parent.mkdir(parents=True, exist_ok=True)
    out.write_parquet(output_path) if output_path.suffix == ".parquet" else out.write_csv(output_path)
    return {
        "model": model,
        "trained_on": {"folder": str(folder), "target": target, "rows": len(rows["train"])},
        "screen_test": {
            "rows": len(rows["test"]),
            "mse": float(np.mean((test_prediction - y_test) ** 2)),
            "spearman": float(stats.spearmanr(test_prediction, y_test).statistic),
        },
        "scored": out.height,
        "output": str(output_path),
    }
