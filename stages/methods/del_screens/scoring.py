"""Score your own library: a model trained on a KinDEL folder's screen ranks the SMILES of your table.

The model is fit on the training rows of `split1` of the folder's random split (the DNN and DEL-Compose stop
on its valid rows); its test MSE and Spearman ρ with `target_enrichment` on the test rows are reported with
the scores, so you see how well it ranks compounds of that screen before trusting it on yours.

Everything about your table is checked before any training: the model name, the output path, the file (found,
readable, at least one row), the SMILES column and every SMILES (RDKit must parse it; the error names the row).
`compose_factorized` encodes a compound from its three building blocks, so it needs them in your table too
(columns `smiles_a`, `smiles_b`, `smiles_c`, KinDEL's names); the other models need only the SMILES.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
from scipy import stats

from stages.core.errors import DataValidationError, MissingSourceError, PipelineError
from stages.core.io import atomic_path
from stages.methods.del_screens import compose
from stages.methods.del_screens.baselines import REGRESSORS
from stages.methods.del_screens.config import ComposeOptions
from stages.methods.del_screens.files import read_folder
from stages.methods.del_screens.fingerprints import morgan_smiles
from stages.methods.del_screens.schema import ENRICHMENT, SYNTHONS

COMPOSE_MODELS = ("compose_full", "compose_factorized")
OUTPUT_SUFFIXES = (".csv", ".parquet")


def model_names() -> list[str]:
    """Every model `score_file` trains: the fingerprint regressors and the two DEL-Compose encoders."""
    return [*REGRESSORS.names(), *COMPOSE_MODELS]


def read_smiles_table(path: str | Path, column: str = "smiles") -> pl.DataFrame:
    """Your CSV or Parquet table; a missing, unreadable or empty file or a missing SMILES column is an error
    naming it and the file."""
    path = Path(path)
    if not path.is_file():
        raise MissingSourceError(f"{path}: file not found (--input)")
    try:
        if path.suffix.lower() == ".parquet":
            table = pl.read_parquet(path)
        else:
            table = pl.read_csv(path, infer_schema_length=None)
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError) as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise DataValidationError(f"{path}: not a readable {path.suffix or 'CSV'} table ({first})") from None
    if column not in table.columns:
        raise DataValidationError(
            f"{path}: no column {column!r} (--smiles-column; columns: {', '.join(table.columns) or 'none'})"
        )
    if table.height == 0:
        raise DataValidationError(f"{path}: 0 rows; nothing to score")
    return table


def _check_output(path: Path) -> None:
    if path.suffix.lower() not in OUTPUT_SUFFIXES:
        raise PipelineError(f"--output {path}: must end in .csv or .parquet")
    if path.is_dir():
        raise PipelineError(f"--output {path}: is a folder; give a .csv or .parquet file path")


def _user_features(model: str, table: pl.DataFrame, column: str, where: str):
    """Your compounds featurised for `model` (this parses every SMILES: a bad one is an error naming its row)."""
    if model not in COMPOSE_MODELS:
        return morgan_smiles(table[column].to_list(), where=where)
    options = ComposeOptions(variant=model.removeprefix("compose_"))
    needed = SYNTHONS if options.variant == "factorized" else ()
    missing = [name for name in needed if name not in table.columns]
    if missing:
        raise DataValidationError(
            f"{where}: --model {model} encodes each compound from its three building blocks and needs the "
            f"column(s) {', '.join(missing)} (KinDEL's building-block SMILES); use compose_full or a "
            "fingerprint model for SMILES alone"
        )
    mine = table.select(pl.col(column).alias("smiles"), *(pl.col(name).cast(pl.String) for name in needed))
    mine = mine.with_columns(
        *(pl.lit(1.0).alias(c) for c in compose.LOAD_AND_COUNTS), pl.lit(0.0).alias(ENRICHMENT)
    )
    return compose.featurise(mine, options, where)


def _fit_predict(model: str, screen, rows: dict, features, seed: int):
    library = screen.library
    if model in COMPOSE_MODELS:
        options = ComposeOptions(variant=model.removeprefix("compose_"))
        data = compose.featurise(library, options)
        fitted = compose.fit(options, data.take(rows["train"]), data.take(rows["valid"]), seed)
        return fitted.score(data.take(rows["test"])), fitted.score(features)
    regressor = REGRESSORS.build(model, {}, key=f"model {model}")
    library_features = morgan_smiles(library["smiles"].to_list(), where="library")
    y = library[ENRICHMENT].to_numpy()
    regressor.fit(
        library_features[rows["train"]],
        y[rows["train"]],
        library_features[rows["valid"]],
        y[rows["valid"]],
        seed,
    )
    return regressor.predict(library_features[rows["test"]]), regressor.predict(features)


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
    your table with a `score` column (higher: predicted stronger binder) and return a summary.

    Your table and the output path are checked before the folder is read or anything is trained; the output
    is written only when everything succeeded (an earlier file at that path is kept on failure)."""
    if isinstance(seed, bool) or not 0 <= seed <= 2**32 - 1:
        raise PipelineError(f"--seed: {seed!r}; must be an integer in 0 … {2**32 - 1}")
    if model not in model_names():
        raise PipelineError(f"--model: unknown model {model!r}; choose from {', '.join(model_names())}")
    table = read_smiles_table(input_path, smiles_column)
    if "score" in table.columns:
        raise DataValidationError(
            f"{input_path}: already has a column 'score' (the output adds one); rename it"
        )
    output_path = Path(output_path)
    _check_output(output_path)
    features = _user_features(model, table, smiles_column, f"{input_path} ({smiles_column})")
    screen, _ = read_folder(folder, target)
    labels = screen.splits["random"]["split1"].to_numpy()
    rows = {part: np.flatnonzero(labels == part) for part in ("train", "valid", "test")}
    test_prediction, scores = _fit_predict(model, screen, rows, features, seed)
    y_test = screen.library[ENRICHMENT].to_numpy()[rows["test"]]
    out = table.with_columns(pl.Series("score", np.asarray(scores, dtype=float)))
    with atomic_path(output_path) as tmp:
        out.write_parquet(tmp) if output_path.suffix.lower() == ".parquet" else out.write_csv(tmp)
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
