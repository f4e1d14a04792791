"""Running a registered bandit algorithm on your own arm matrix (`icml25 bandit`, or this Python API).

The arms come from a Parquet table (one row per arm, numeric feature columns), θ from a comma-separated list
or a JSON file holding a list; everything is validated before anything is written (null/NaN/±inf, K < 2,
d < 1, rank-deficient arms, θ of the wrong length, T < 1: an error naming the file, column or key). The
column rules of `stages.datasets.user_table` apply: a guessed id-like column (`arm_id`, unique integers) is an
error asking for `--feature-columns`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from stages.core.errors import PipelineError
from stages.core.io import OutputTransaction, read_parquet, write_json, write_parquet, write_text
from stages.datasets.user_table import check_finite, guess_feature_columns
from stages.methods.bandits.environment import BanditInputError, LinearBandit, validate_instance
from stages.methods.bandits.registry import ALGORITHMS
from stages.methods.bandits.trace import Trace


def read_arms(path: str | Path, feature_columns: list[str] | None = None) -> np.ndarray:
    """The K × d arm matrix from a Parquet file (default: every numeric column)."""
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
    check_finite(table, columns, str(path))
    return table.select(columns).to_numpy().astype(np.float64)


def parse_theta(text: str) -> np.ndarray:
    """θ from `0.1,0.2,...` or from a JSON file holding a list of numbers."""
    path = Path(text)
    source = str(path) if path.suffix == ".json" else "--theta"
    if path.suffix == ".json":
        if not path.is_file():
            raise BanditInputError(f"{path}: θ file not found")
        try:
            values = json.loads(path.read_text())
        except json.JSONDecodeError as error:
            raise BanditInputError(f"{path}: not valid JSON ({error})") from None
    else:
        values = text.split(",")
    try:
        return np.array([float(value) for value in values], dtype=np.float64)
    except (TypeError, ValueError):
        raise BanditInputError(f"{source}: θ must be a list of numbers, got {text!r}") from None


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
) -> BanditRun:
    """Validate the instance, play `horizon` pulls with the registered `algorithm`, summarise the run."""
    validate_instance(arms, theta, horizon, arms_source, theta_source)
    if not np.isfinite(noise_sd) or noise_sd < 0:
        raise BanditInputError(f"noise_sd: {noise_sd!r}; must be ≥ 0")
    policy = ALGORITHMS.build(algorithm, options or {}, key="option")
    bandit = LinearBandit(arms, theta, noise_sd)
    trace = policy.run(bandit, int(horizon), np.random.default_rng(seed))
    summary = {
        "algorithm": algorithm,
        "options": policy.options.model_dump(),
        "n_arms": bandit.n_arms,
        "dim": bandit.dim,
        "horizon": int(horizon),
        "seed": seed,
        "noise_sd": noise_sd,
        "final_regret": round(trace.final_regret, 6),
        "batches": trace.n_batches,
        "batch_ends": trace.batch_ends.tolist() if trace.n_batches <= 1000 else "more than 1000 batches",
        "best_arm": trace.best_arm,
        "survivors": trace.survivors.tolist(),
        "best_arm_eliminated": trace.best_arm_eliminated if policy.eliminates else None,
        "info": trace.info,
    }
    return BanditRun(trace, summary)


def report_markdown(run: BanditRun, arms_source: str) -> str:
    """A short Markdown report of one run."""
    s = run.summary
    survivors = s["survivors"] if len(s["survivors"]) <= 20 else f"{len(s['survivors'])} arms"
    lines = [
        f"# Bandit run: {s['algorithm']} on {arms_source}",
        "",
        f"- arms: K = {s['n_arms']}, d = {s['dim']}; horizon T = {s['horizon']}; noise σ = {s['noise_sd']}",
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


def write_run(run: BanditRun, output: str | Path, arms_source: str) -> list[Path]:
    """Write `trace.parquet`, `summary.json` and `report.md` into the folder `output`, all or nothing."""
    output = Path(output)
    if output.exists() and not output.is_dir():
        raise BanditInputError(f"--output {output}: exists and is not a folder")
    output.parent.mkdir(parents=True, exist_ok=True)
    files = [output / "trace.parquet", output / "summary.json", output / "report.md"]
    with OutputTransaction(output.parent) as transaction:
        write_parquet(run.trace.to_frame(), transaction.path(files[0]))
        write_json(run.summary, transaction.path(files[1]))
        write_text(report_markdown(run, arms_source), transaction.path(files[2]))
    return files


def arms_frame(arms: np.ndarray) -> pl.DataFrame:
    """An arm matrix as the Parquet table `icml25 bandit` reads (columns x0 … x{d−1})."""
    return pl.DataFrame({f"x{j}": arms[:, j] for j in range(arms.shape[1])})
