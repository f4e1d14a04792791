"""Running a registered bandit algorithm on your own arm matrix (`icml25 bandit`, or this Python API).

The arms come from a Parquet table (one row per arm, numeric feature columns), θ from a comma-separated list
or a JSON file holding a list; everything is validated before anything is written (null/NaN/±inf, K < 2,
d < 1, rank-deficient arms, θ of the wrong length or not finite, T outside 1 … 10⁷, a seed outside
0 … 2³²−1: an error naming the file, column or key). The column rules of `stages.datasets.user_table` apply:
a guessed id-like column (`arm_id`, unique integers) is an error asking for `--feature-columns`; the columns
left out (not numeric, or not listed) are named in the summary and the report. Identical rows of the arm
matrix are one arm: the run uses the first row of each group (their indices are the user's row numbers) and
the summary says how many duplicates were dropped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import polars as pl

from stages.core.errors import PipelineError
from stages.core.io import OutputTransaction, read_parquet, write_json, write_parquet, write_text
from stages.datasets.user_table import check_finite, guess_feature_columns
from stages.methods.bandits.environment import BanditInputError, LinearBandit, validate_instance
from stages.methods.bandits.registry import ALGORITHMS
from stages.methods.bandits.trace import NOT_ELIMINATED, Trace

MAX_HORIZON = 10_000_000  # the per-pull trace is kept in memory and written to Parquet
MAX_SEED = 2**32 - 1


@dataclass(frozen=True)
class ArmTable:
    """The arm matrix read from a file, the feature columns used and the columns left out."""

    arms: np.ndarray
    columns: list[str]
    dropped: list[str]


def read_arms(path: str | Path, feature_columns: list[str] | None = None) -> np.ndarray:
    """The K × d arm matrix from a Parquet file (default: every numeric column)."""
    return read_arm_table(path, feature_columns).arms


def read_arm_table(path: str | Path, feature_columns: list[str] | None = None) -> ArmTable:
    """The arm matrix of a Parquet file with the columns used and those left out (see :func:`read_arms`)."""
    path = Path(path)
    if not path.is_file():
        raise BanditInputError(f"{path}: arms file not found")
    try:
        table = read_parquet(path)
    except PipelineError:
        raise
    except Exception as error:  # any read failure is the file's fault
        raise BanditInputError(f"{path}: not a readable Parquet file ({error})") from None
    columns = feature_columns or guess_feature_columns(
        table, [], str(path), what="arm feature", id_flag=False
    )
    unknown = [name for name in columns if name not in table.columns]
    if unknown:
        raise BanditInputError(
            f"{path}: no column(s) {', '.join(unknown)}; columns: {', '.join(table.columns)}"
        )
    if not columns:
        raise BanditInputError(f"{path}: no numeric feature columns (d = 0; need d ≥ 1)")
    for name in columns:
        if not table.schema[name].is_numeric():
            raise BanditInputError(f"{path}: column '{name}' is {table.schema[name]}, not numeric")
    if len(set(columns)) != len(columns):
        raise BanditInputError(f"--feature-columns: a column is listed twice ({', '.join(columns)})")
    check_finite(table, columns, str(path))
    dropped = [name for name in table.columns if name not in columns]
    return ArmTable(table.select(columns).to_numpy().astype(np.float64), list(columns), dropped)


def distinct_arms(arms: np.ndarray) -> np.ndarray:
    """Row indices of the first row of each group of identical arms, in file order."""
    _, first = np.unique(arms, axis=0, return_index=True)
    return np.sort(first)


def parse_theta(text: str) -> np.ndarray:
    """θ from `0.1,0.2,...` (or `[0.1, 0.2]`) or from a JSON file holding a list of numbers.

    Every entry must be a finite number (not a bool, string or nested list); the length is checked against d
    by :func:`run_bandit`.
    """
    path = Path(text)
    if path.suffix == ".json":
        source = str(path)
        if not path.is_file():
            raise BanditInputError(f"{path}: θ file not found")
        try:
            values = json.loads(path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise BanditInputError(f"{path}: not valid JSON ({error})") from None
    else:
        source = "--theta"
        stripped = text.strip()
        if stripped.startswith("["):
            try:
                values = json.loads(stripped)
            except json.JSONDecodeError:
                raise BanditInputError(f"--theta: {text!r} is not a JSON list of numbers") from None
        else:
            values = [_number(value, source, text) for value in stripped.split(",")]
    if not isinstance(values, list) or not values:
        raise BanditInputError(f"{source}: θ must be a non-empty list of numbers, got {text!r}")
    if any(isinstance(value, bool) or not isinstance(value, int | float) for value in values):
        raise BanditInputError(f"{source}: θ must be a list of numbers, got {text!r}")
    theta = np.array(values, dtype=np.float64)
    if not np.all(np.isfinite(theta)):
        raise BanditInputError(f"{source}: θ must hold finite numbers (no NaN or ±inf), got {text!r}")
    return theta


def _number(value: str, source: str, text: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise BanditInputError(f"{source}: θ must be a list of numbers, got {text!r}") from None


def check_run_settings(horizon: int, seed: int, noise_sd: float) -> None:
    """Raise naming the option unless T, the seed and σ are in range."""
    if isinstance(horizon, bool) or int(horizon) != horizon or not 1 <= horizon <= MAX_HORIZON:
        raise BanditInputError(f"--horizon: T = {horizon!r}; must be an integer in 1 … {MAX_HORIZON}")
    if isinstance(seed, bool) or int(seed) != seed or not 0 <= seed <= MAX_SEED:
        raise BanditInputError(f"--seed: {seed!r}; must be an integer in 0 … {MAX_SEED}")
    if not np.isfinite(noise_sd) or noise_sd < 0:
        raise BanditInputError(f"--noise-sd: {noise_sd!r}; must be a finite number ≥ 0")


@dataclass(frozen=True)
class BanditRun:
    """What `run_bandit` returns: the trace and its summary."""

    trace: Trace
    summary: dict


def run_bandit(
    arms: np.ndarray,
    theta: np.ndarray,
    horizon: int,
    algorithm: str = "blae",
    options: dict | None = None,
    seed: int = 0,
    noise_sd: float = 1.0,
    arms_source: str = "arms",
    theta_source: str = "theta",
    columns: list[str] | None = None,
    left_out: list[str] | None = None,
) -> BanditRun:
    """Validate the instance, play `horizon` pulls with the registered `algorithm`, summarise the run.

    Identical arm rows are merged (the first of each group is played; arm indices in the trace and summary are
    row numbers of `arms`); `columns`/`left_out` (the feature columns used and dropped) go into the summary.
    """
    check_run_settings(horizon, seed, noise_sd)
    arms = np.asarray(arms, dtype=np.float64)
    theta = np.asarray(theta, dtype=np.float64)
    if arms.ndim == 2 and theta.shape != (arms.shape[1],):
        raise BanditInputError(
            f"{theta_source}: θ must have exactly d = {arms.shape[1]} entries (one per feature column), "
            f"got {theta.size}"
        )
    validate_instance(arms, theta, horizon, arms_source, theta_source)
    kept = distinct_arms(arms)
    duplicates = len(arms) - len(kept)
    if len(kept) < 2:
        raise BanditInputError(
            f"{arms_source}: all {len(arms)} arms are identical rows; a bandit needs two distinct arms"
        )
    policy = ALGORITHMS.build(algorithm, options or {}, key="option")
    bandit = LinearBandit(arms[kept], theta, noise_sd)
    trace = _in_row_numbers(policy.run(bandit, int(horizon), np.random.default_rng(seed)), kept, len(arms))
    if not np.isfinite(trace.final_regret):
        raise BanditInputError(
            f"{arms_source}: {algorithm} produced a non-finite regret on these arms (try another --algorithm)"
        )
    summary = {
        "algorithm": algorithm,
        "options": policy.options.model_dump(),
        "n_arms": len(arms),
        "distinct_arms": len(kept),
        "duplicate_arms_dropped": duplicates,
        "dim": bandit.dim,
        "feature_columns": list(columns) if columns is not None else None,
        "columns_left_out": list(left_out or []),
        "horizon": int(horizon),
        "seed": seed,
        "noise_sd": noise_sd,
        "final_regret": round(trace.final_regret, 6),
        "batches": trace.n_batches,
        "batch_ends": trace.batch_ends.tolist() if trace.n_batches <= 1000 else "more than 1000 batches",
        "best_arm": trace.best_arm,
        "survivors": trace.survivors.tolist(),
        "best_arm_eliminated": trace.best_arm_eliminated if policy.eliminates else None,
        "info": _json_safe(trace.info),
    }
    return BanditRun(trace, summary)


def _in_row_numbers(trace: Trace, kept: np.ndarray, n_rows: int) -> Trace:
    """The trace of a run on `arms[kept]` with arm indices turned back into row numbers of `arms`."""
    eliminated = np.full(n_rows, NOT_ELIMINATED, dtype=np.asarray(trace.eliminated_at).dtype)
    eliminated[kept] = trace.eliminated_at
    return replace(
        trace,
        arms=kept[trace.arms],
        survivors=kept[np.asarray(trace.survivors, dtype=np.int64)],
        best_arm=int(kept[trace.best_arm]),
        eliminated_at=eliminated,
    )


def _json_safe(value):
    """`value` with non-finite floats as strings ('nan', 'inf'), so `summary.json` stays valid JSON."""
    if isinstance(value, dict):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(item) for item in value]
    if isinstance(value, float | np.floating) and not np.isfinite(value):
        return str(float(value))
    return value


def report_markdown(run: BanditRun, arms_source: str) -> str:
    """A short Markdown report of one run."""
    s = run.summary
    survivors = s["survivors"] if len(s["survivors"]) <= 20 else f"{len(s['survivors'])} arms"
    lines = [
        f"# Bandit run: {s['algorithm']} on {arms_source}",
        "",
        f"- arms: K = {s['n_arms']}, d = {s['dim']}; horizon T = {s['horizon']}; noise σ = {s['noise_sd']}",
        *_column_lines(s),
        f"- seed: {s['seed']}",
        f"- options: {json.dumps(s['options'])}",
        f"- final pseudo-regret: **{s['final_regret']:.2f}** ({s['final_regret'] / s['horizon']:.4f} per pull)",
        f"- batches: **{s['batches']}**",
        f"- best arm (by the θ given): {s['best_arm']}; survivors at the end: {survivors}",
    ]
    if s["best_arm_eliminated"] is not None:
        lines.append(f"- best arm eliminated: {'yes' if s['best_arm_eliminated'] else 'no'}")
    lines += ["", "Per-pull trace (t, arm, reward, regret, cumulative_regret, batch): `trace.parquet`.", ""]
    return "\n".join(lines)


def _column_lines(summary: dict) -> list[str]:
    lines = []
    if summary.get("feature_columns"):
        lines.append(f"- feature columns: {', '.join(summary['feature_columns'])}")
    if summary.get("columns_left_out"):
        lines.append(
            f"- columns left out (not numeric or not listed): {', '.join(summary['columns_left_out'])}"
        )
    if summary.get("duplicate_arms_dropped"):
        lines.append(
            f"- {summary['duplicate_arms_dropped']} duplicate arm(s) (identical rows) dropped: "
            f"{summary['distinct_arms']} distinct arms played; arm numbers are row numbers of the file"
        )
    return lines


def write_run(run: BanditRun, output: str | Path, arms_source: str) -> list[Path]:
    """Write `trace.parquet`, `summary.json` and `report.md` into the folder `output`, all or nothing."""
    output = Path(output)
    if output.exists() and not output.is_dir():
        raise BanditInputError(f"--output {output}: exists and is not a folder")
    output.parent.mkdir(parents=True, exist_ok=True)
    files = [output / "trace.parquet", output / "summary.json", output / "report.md"]
    with OutputTransaction(output.parent, owner="icml25 bandit") as transaction:
        write_parquet(run.trace.to_frame(), transaction.path(files[0]))
        write_json(run.summary, transaction.path(files[1]))
        write_text(report_markdown(run, arms_source), transaction.path(files[2]))
    return files


def arms_frame(arms: np.ndarray) -> pl.DataFrame:
    """An arm matrix as the Parquet table `icml25 bandit` reads (columns x0 … x{d−1})."""
    return pl.DataFrame({f"x{j}": arms[:, j] for j in range(arms.shape[1])})
