"""Core-set selection on any classification table: the reusable stage behind `coreset-select` and
`icml25 select`.

The input is either a classification table (`sample_id`, `split`, `label`, array column `features`) or a
user's wide table (numeric feature columns + a label; the rules of `stages.datasets.user_table` apply). It is
validated and the `train` rows form the pool. :func:`sweep_table` runs several methods × budgets × seeds on it
and trains the embedding model and loss trace once per trace seed, only when some method needs it (a trace
selector, or a feature-space selector on `embedding` features without a saved embedding).

Every core-set is checked against the pool (:func:`coreset_checks`); each failed check is a warning and a
field of the run's summary:
- a class of the pool has no sample in the core-set;
- the class shares shift by more than :data:`SHARE_SHIFT_BOUND` in total variation distance
  (½ Σ_c |share_core(c) − share_pool(c)|; balanced quotas on an imbalanced pool shift on purpose);
- more than :data:`MISCLASSIFIED_BOUND` of the picks are samples the full model (trained on the whole pool,
  its last trace epoch) misclassifies while that model's pool accuracy exceeds the majority-class share
  (checked only when a model was trained for that seed).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import polars as pl
from pydantic import Field

from stages.core.errors import DataValidationError, PipelineError
from stages.core.params import StrictModel
from stages.core.validate import ValidationReport, ensure_valid
from stages.datasets.classification import ClassificationArrays, classification_schema, to_arrays
from stages.datasets.user_table import check_finite, describe_classification_table, read_wide_table
from stages.methods.selection.coreset import CoresetSelector, SelectionPool, budget_count
from stages.methods.selection.registry import make_selector
from stages.methods.selection.tracing import TraceResult, compute_trace
from stages.models.training import Standardizer, TrainConfig

SHARE_SHIFT_BOUND = 0.2
MISCLASSIFIED_BOUND = 0.5


class TableSelectionParams(StrictModel):
    """What `coreset-select` reads: the table, how to read it, and the selector."""

    input: str = "data/raw/digits/table.parquet"
    label_column: str = "label"
    feature_columns: list[str] | None = None
    id_column: str | None = None
    method: str = "mrmc"
    options: dict[str, Any] = Field(default_factory=dict)
    budget: float = Field(0.3, gt=0, le=1)
    seed: int = Field(0, ge=0)
    feature_space: Literal["embedding", "raw"] = "embedding"
    trace: TrainConfig = TrainConfig(epochs=10)


@dataclass(frozen=True)
class PreparedTable:
    """A validated classification table, its pool (the `train` rows) and what was read from the input."""

    table: pl.DataFrame
    report: ValidationReport
    pool_frame: pl.DataFrame
    pool: ClassificationArrays
    description: dict[str, Any]
    raw_labels: tuple[Any, ...]

    @property
    def n_classes(self) -> int:
        """Number of classes (internal labels are 0..K-1 for a wide table)."""
        return max(len(self.raw_labels), int(self.pool.labels.max()) + 1)

    def raw(self, internal: int) -> Any:
        """The user's label value of an internal label."""
        return self.raw_labels[internal] if internal < len(self.raw_labels) else internal


def read_table(
    frame: pl.DataFrame, params: TableSelectionParams, source: str
) -> tuple[pl.DataFrame, dict[str, Any], tuple[Any, ...]]:
    """The input as a classification table, the columns/labels it was read with, and raw labels by index."""
    if "features" in frame.columns and isinstance(frame.schema["features"], pl.Array | pl.List):
        description = describe_classification_table(frame, "label", source)
        raw = tuple(range(max((int(k) for k in description["labels"]["raw_to_internal"]), default=-1) + 1))
        return frame, description, raw
    user = read_wide_table(
        frame, params.label_column, params.feature_columns, params.id_column, source=source
    )
    return user.frame, user.describe(), user.labels.raw


def as_classification_table(frame: pl.DataFrame, params: TableSelectionParams, source: str) -> pl.DataFrame:
    """The input as a classification table (converted from a wide table when it has no `features` array)."""
    return read_table(frame, params, source)[0]


def prepare_table(frame: pl.DataFrame, params: TableSelectionParams, source: str) -> PreparedTable:
    """Read and validate the input; its `train` rows are the pool."""
    table, description, raw = read_table(frame, params, source)
    report = ensure_valid(table, classification_schema(), source)
    pool_frame = table.filter(pl.col("split") == "train")
    if pool_frame.is_empty():
        raise DataValidationError(f"{source}: no 'train' rows to select from")
    return PreparedTable(table, report, pool_frame, to_arrays(pool_frame), description, raw)


def read_embedding(frame: pl.DataFrame, sample_ids: np.ndarray, seed: int, source: str) -> np.ndarray:
    """Rows of a saved feature space (`sample_id`, array column `embedding`, optional `seed`) for the pool.

    A file with a `seed` column holds one embedding per trace seed; without it, one embedding serves all.
    """
    if not {"sample_id", "embedding"} <= set(frame.columns):
        raise DataValidationError(
            f"{source}: an embedding file needs columns 'sample_id' and 'embedding' (has: {', '.join(frame.columns)})"
        )
    if not isinstance(frame.schema["embedding"], pl.Array | pl.List):
        raise DataValidationError(f"{source}: column 'embedding' must be a numeric array column")
    if "seed" in frame.columns:
        frame = frame.filter(pl.col("seed") == seed)
        if frame.is_empty():
            raise DataValidationError(f"{source}: no embedding rows for trace seed {seed}")
    if frame["sample_id"].n_unique() != frame.height:
        raise DataValidationError(f"{source}: column 'sample_id' repeats ids (seed {seed})")
    order = pl.DataFrame({"sample_id": sample_ids.astype(np.int64)}).with_row_index("position")
    rows = order.join(frame.select("sample_id", "embedding"), on="sample_id", how="left").sort("position")
    missing = rows.filter(pl.col("embedding").is_null())["sample_id"]
    if len(missing):
        raise DataValidationError(
            f"{source}: {len(missing)} pool sample_id(s) have no embedding, e.g. {missing.head(5).to_list()}"
        )
    values = np.array(rows["embedding"].to_list(), dtype=np.float32)
    check_finite(pl.DataFrame({"embedding": values.ravel()}), ["embedding"], source)
    return values


@dataclass
class TraceCache:
    """Trains the embedding model / loss trace at most once per trace seed and counts the trainings."""

    pool: ClassificationArrays
    n_classes: int
    config: TrainConfig
    results: dict[int, TraceResult] = field(default_factory=dict)

    @property
    def trainings(self) -> int:
        """How many models were trained."""
        return len(self.results)

    @property
    def seconds(self) -> float:
        """Training time in total."""
        return sum(result.seconds for result in self.results.values())

    def get(self, seed: int) -> TraceResult:
        """The trace of `seed`, trained on first use."""
        if seed not in self.results:
            pool = self.pool
            self.results[seed] = compute_trace(pool.features, pool.labels, self.n_classes, self.config, seed)
        return self.results[seed]


@dataclass(frozen=True)
class SweepPlan:
    """Methods × budgets × seeds, per-method options and the trace seed (None: each seed trains its own)."""

    methods: tuple[str, ...]
    budgets: tuple[float, ...]
    seeds: tuple[int, ...]
    options: dict[str, dict[str, Any]] = field(default_factory=dict)
    trace_seed: int | None = None

    def selectors(self, key: str) -> dict[str, CoresetSelector]:
        """Every method built with its options (an unknown method or option fails before any work)."""
        return {
            method: make_selector(method, self.options.get(method, {}), key=f"{key}.{method}")
            for method in self.methods
        }

    def trace_key(self, seed: int) -> int:
        """The seed whose trained model serves selection seed `seed`."""
        return seed if self.trace_seed is None else self.trace_seed


@dataclass(frozen=True)
class SelectionRun:
    """One (method, budget, seed): the chosen rows (user's label values) and the run's summary."""

    method: str
    budget: float
    seed: int
    chosen: pl.DataFrame
    summary: dict[str, Any]


@dataclass(frozen=True)
class SweepResult:
    """Every run of a sweep, the input's validation and description, and what was trained."""

    runs: list[SelectionRun]
    prepared: PreparedTable
    trainings: int
    training_seconds: float
    scores: pl.DataFrame | None
    embeddings: pl.DataFrame | None

    def report(self, source: str) -> dict[str, Any]:
        """JSON-ready report of the sweep (deterministic apart from `seconds` fields)."""
        return {
            "input": source,
            **self.prepared.description,
            "validation": {"success": self.prepared.report.success, "rows": self.prepared.report.rows},
            "pool_size": len(self.prepared.pool),
            "trainings": self.trainings,
            "training_seconds": round(self.training_seconds, 4),
            "rules": {"share_shift_bound": SHARE_SHIFT_BOUND, "misclassified_bound": MISCLASSIFIED_BOUND},
            "runs": [run.summary for run in self.runs],
        }


def coreset_checks(
    labels: np.ndarray, chosen: np.ndarray, n_classes: int, full_correct: np.ndarray | None
) -> dict[str, Any]:
    """Class coverage, class-share shift and the full model's errors among the picks (see the module doc)."""
    pool_counts = np.bincount(labels, minlength=n_classes)
    core_counts = np.bincount(labels[chosen], minlength=n_classes)
    pool_share, core_share = pool_counts / pool_counts.sum(), core_counts / core_counts.sum()
    checks: dict[str, Any] = {
        "missing_classes": [int(c) for c in np.flatnonzero((core_counts == 0) & (pool_counts > 0))],
        "class_share_shift": round(float(0.5 * np.abs(core_share - pool_share).sum()), 4),
        "majority_share": round(float(pool_share.max()), 4),
        "full_model_accuracy": None,
        "misclassified_share": None,
    }
    checks["share_shift_exceeds_bound"] = checks["class_share_shift"] > SHARE_SHIFT_BOUND
    if full_correct is not None:
        checks["full_model_accuracy"] = round(float(full_correct.mean()), 4)
        checks["misclassified_share"] = round(float(1 - full_correct[chosen].mean()), 4)
    checks["dominated_by_misclassified"] = bool(
        full_correct is not None
        and checks["misclassified_share"] > MISCLASSIFIED_BOUND
        and checks["full_model_accuracy"] > checks["majority_share"]
    )
    return checks


def check_warnings(checks: dict[str, Any], prepared: PreparedTable, budget: int) -> list[str]:
    """The failed checks as sentences (raw label values)."""
    warnings = []
    if checks["missing_classes"]:
        missing = ", ".join(repr(prepared.raw(c)) for c in checks["missing_classes"])
        note = (
            f" (the budget {budget} is below the {prepared.n_classes} classes)"
            if budget < prepared.n_classes
            else ""
        )
        warnings.append(f"the core-set has no sample of class(es) {missing}{note}")
    if checks["share_shift_exceeds_bound"]:
        warnings.append(
            f"class shares shift by {checks['class_share_shift']} (total variation) from the pool's, "
            f"above the bound {SHARE_SHIFT_BOUND}"
        )
    if checks["dominated_by_misclassified"]:
        warnings.append(
            f"{checks['misclassified_share']:.0%} of the picks are samples the full model misclassifies "
            f"(above {MISCLASSIFIED_BOUND:.0%}) while it is right on {checks['full_model_accuracy']:.0%} of the "
            f"pool (majority class: {checks['majority_share']:.0%}): this core-set may train an anti-predictive model"
        )
    return warnings


def sweep_table(
    frame: pl.DataFrame,
    params: TableSelectionParams,
    plan: SweepPlan,
    source: str,
    embedding: pl.DataFrame | None = None,
    embedding_source: str = "embedding",
    with_scores: bool = False,
    need_embeddings: bool = False,
) -> SweepResult:
    """Every (method, budget, seed) of `plan` on the pool of `frame`, sharing trained models across them.

    `with_scores` / `need_embeddings` ask for the per-sample scores / trained embeddings, which need a method
    that trains a model (an error before any work otherwise).
    """
    selectors = plan.selectors("select.options")
    trains = any(_trains(selector, params, embedding) for selector in selectors.values())
    for wanted, what in ((with_scores, "per-sample scores"), (need_embeddings, "trained embeddings")):
        if wanted and not trains:
            raise PipelineError(
                f"{what} need a trained model, and none of {', '.join(plan.methods)} trains one here "
                "(score-based: el2n, forgetting, mrmc; or a feature-space method on --feature-space embedding)"
            )
    prepared = prepare_table(frame, params, source)
    pool = prepared.pool
    cache = TraceCache(pool, prepared.n_classes, params.trace)
    raw_features = Standardizer.fit(pool.features)(pool.features).numpy()
    runs = []
    for seed in plan.seeds:
        for method, selector in selectors.items():
            features, space = _features(
                selector, params, plan, seed, cache, raw_features, embedding, embedding_source, prepared
            )
            trace = cache.get(plan.trace_key(seed)).trace if selector.needs_trace else None
            selection_pool = SelectionPool(features, pool.labels, trace)
            for budget in plan.budgets:
                runs.append(
                    _run(selector, method, budget, seed, selection_pool, space, plan, cache, prepared)
                )
    scores = _scores_table(selectors, cache, prepared, raw_features) if with_scores else None
    embeddings = _embedding_table(cache, pool.sample_ids) if need_embeddings else None
    return SweepResult(runs, prepared, cache.trainings, cache.seconds, scores, embeddings)


def _trains(selector: CoresetSelector, params: TableSelectionParams, embedding: pl.DataFrame | None) -> bool:
    """Whether a selector needs a model trained on the pool (its trace, or embeddings not given in a file)."""
    embedded = selector.uses_features and params.feature_space == "embedding" and embedding is None
    return selector.needs_trace or embedded


def _features(
    selector: CoresetSelector,
    params: TableSelectionParams,
    plan: SweepPlan,
    seed: int,
    cache: TraceCache,
    raw_features: np.ndarray,
    embedding: pl.DataFrame | None,
    embedding_source: str,
    prepared: PreparedTable,
) -> tuple[np.ndarray, str]:
    """The feature space a selector sees, and its name for the summary."""
    if not selector.uses_features or params.feature_space == "raw":
        return raw_features, "raw (standardised)" if selector.uses_features else "unused"
    key = plan.trace_key(seed)
    if embedding is not None:
        return read_embedding(
            embedding, prepared.pool.sample_ids, key, embedding_source
        ), f"embedding file {embedding_source}"
    return cache.get(key).embeddings, f"embedding (trained, seed {key})"


def _run(
    selector: CoresetSelector,
    method: str,
    budget_fraction: float,
    seed: int,
    pool: SelectionPool,
    space: str,
    plan: SweepPlan,
    cache: TraceCache,
    prepared: PreparedTable,
) -> SelectionRun:
    started = time.perf_counter()
    budget = budget_count(budget_fraction, len(pool))
    chosen = selector(pool, budget, np.random.default_rng(seed))
    seconds = time.perf_counter() - started
    trained = cache.results.get(plan.trace_key(seed))
    full_correct = trained.trace.correct[:, -1] if trained is not None else None
    checks = coreset_checks(pool.labels, chosen, prepared.n_classes, full_correct)
    warnings = check_warnings(checks, prepared, budget)
    checks["missing_classes"] = [prepared.raw(c) for c in checks["missing_classes"]]
    labels = pool.labels[chosen]
    classes, counts = np.unique(labels, return_counts=True)
    chosen_frame = pl.DataFrame(
        {"sample_id": prepared.pool.sample_ids[chosen], "label": [prepared.raw(int(c)) for c in labels]}
    )
    summary = {
        "method": method,
        "options": selector.options.model_dump(),
        "budget_fraction": budget_fraction,
        "seed": seed,
        "trace_seed": plan.trace_key(seed)
        if (selector.needs_trace or space.startswith("embedding ("))
        else None,
        "feature_space": space,
        "pool_size": len(pool),
        "selected": int(budget),
        "class_counts": {str(prepared.raw(int(c))): int(n) for c, n in zip(classes, counts, strict=True)},
        "checks": checks,
        "warnings": warnings,
        "seconds": round(seconds, 4),
    }
    return SelectionRun(method, budget_fraction, seed, chosen_frame, summary)


def _scores_table(
    selectors: dict[str, CoresetSelector],
    cache: TraceCache,
    prepared: PreparedTable,
    raw_features: np.ndarray,
) -> pl.DataFrame:
    """Per trace seed and pool sample: the full model's correctness and final loss, and each method's score."""
    scored = [method for method, selector in selectors.items() if selector.needs_trace]
    if not cache.results:
        raise PipelineError("scores need a trained model: no method of this sweep trains one")
    frames = []
    for seed, result in sorted(cache.results.items()):
        pool = SelectionPool(raw_features, prepared.pool.labels, result.trace)
        columns = {
            "seed": np.full(len(pool), seed, dtype=np.int64),
            "sample_id": prepared.pool.sample_ids,
            "label": [prepared.raw(int(c)) for c in prepared.pool.labels],
            "full_model_correct": result.trace.correct[:, -1],
            "final_loss": result.trace.loss[:, -1].astype(np.float64),
        }
        for method in scored:
            columns[f"score_{method}"] = np.asarray(selectors[method].scores(pool), dtype=np.float64)
        frames.append(pl.DataFrame(columns))
    return pl.concat(frames)


def _embedding_table(cache: TraceCache, sample_ids: np.ndarray) -> pl.DataFrame:
    """The trained embeddings, one row per (trace seed, sample): the file `--embedding` reads back."""
    frames = []
    for seed, result in sorted(cache.results.items()):
        width = result.embeddings.shape[1]
        frames.append(
            pl.DataFrame(
                {"seed": np.full(len(sample_ids), seed, dtype=np.int64), "sample_id": sample_ids}
            ).with_columns(
                pl.Series(
                    "embedding", result.embeddings.astype(np.float32), dtype=pl.Array(pl.Float32, width)
                )
            )
        )
    return pl.concat(frames)


@dataclass(frozen=True)
class TableSelection:
    """The chosen pool rows, the validation report of the input and the run's summary."""

    chosen: pl.DataFrame
    report: ValidationReport
    summary: dict[str, Any]


def select_from_table(frame: pl.DataFrame, params: TableSelectionParams, source: str) -> TableSelection:
    """Validate `frame` and select one core-set (`params`' method, budget and seed) of its train rows."""
    plan = SweepPlan((params.method,), (params.budget,), (params.seed,), {params.method: params.options})
    result = sweep_table(frame, params, plan, source)
    run = result.runs[0]
    summary = {**run.summary, **result.prepared.description, "trainings": result.trainings}
    return TableSelection(chosen=run.chosen, report=result.prepared.report, summary=summary)
