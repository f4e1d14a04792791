"""The paper's metrics for a synthetic table, given the real training table it came from and held-out real rows.

- utility (synthcity `performance.xgb`): xgboost trained on synthetic vs on real training rows, scored on the
  held-out real rows (AUROC, one-vs-rest macro beyond two classes, or R²);
- detection (synthcity `detection_xgb`): xgboost AUROC telling held-out real rows from synthetic ones,
  k-fold cross-validated on a balanced sample (0.5: indistinguishable);
- membership inference (DOMIAS, KDE): score log p_synth(x) − log p_reference(x), AUROC of training rows
  (members) against held-out rows not used as reference (0.5: no leak); and synthcity's `DomiasMIA_prior`,
  the variant the paper plots: the reference density is an independent normal over the continuous columns
  (≥ 10 distinct values) fitted on all real rows instead of a KDE of reference rows;
- DCR (the paper's R scripts): each training row's Euclidean distance to its nearest synthetic row (raw
  numeric columns, one-hot categories); references: each held-out row's distance to its nearest training row
  (ours) and each training row's distance to its nearest held-out row (the official R scripts' direction);
- association error: mean |Δ| between real and synthetic association matrices (|Spearman| for numeric pairs,
  Cramér's V for categorical pairs, the correlation ratio for mixed pairs), and the same with signed Pearson
  correlations for numeric pairs (the official scripts' choice: a sign flip counts);
- marginals: mean KS statistic over numeric columns, mean total variation over categorical ones.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl
from pydantic import Field

from stages.core.evaluation import auroc
from stages.core.params import StrictModel
from stages.methods.tabular.table import TableSpec, check_matches, infer_spec

Task = Literal["classification", "regression"]


class MetricOptions(StrictModel):
    """How the metrics are computed (fixed before any run)."""

    trees: int = Field(100, ge=1, description="xgboost trees for utility and detection")
    depth: int = Field(4, ge=1, description="xgboost tree depth")
    folds: int = Field(5, ge=2, description="detection cross-validation folds")
    max_detection_rows: int | None = Field(2000, ge=10, description="rows per class in detection (None: all)")


@dataclass(frozen=True)
class Encoder:
    """Numeric columns as they are, categorical columns one-hot over the training table's levels."""

    spec: TableSpec
    levels: dict[str, list]

    @classmethod
    def of(cls, table: pl.DataFrame, spec: TableSpec) -> Encoder:
        return cls(spec, {c: table[c].cast(pl.String).unique().sort().to_list() for c in spec.categorical})

    def matrix(self, table: pl.DataFrame, exclude: str | None = None) -> np.ndarray:
        parts = []
        for column in self.spec.columns:
            if column == exclude:
                continue
            if column in self.levels:
                values = table[column].cast(pl.String).to_numpy()
                parts.append(
                    np.column_stack([values == level for level in self.levels[column]]).astype(float)
                )
            else:
                parts.append(table[column].cast(pl.Float64).to_numpy()[:, None])
        return np.column_stack(parts)


def _xgb(task: Task, options: MetricOptions, seed: int):
    import xgboost

    model = xgboost.XGBClassifier if task == "classification" else xgboost.XGBRegressor
    return model(
        n_estimators=options.trees, max_depth=options.depth, n_jobs=1, random_state=seed, verbosity=0
    )


def _fit_score(
    train: pl.DataFrame,
    test: pl.DataFrame,
    target: str,
    task: Task,
    encoder: Encoder,
    options: MetricOptions,
    seed: int,
) -> float:
    x_train, x_test = encoder.matrix(train, exclude=target), encoder.matrix(test, exclude=target)
    if task == "regression":
        from sklearn.metrics import r2_score

        model = _xgb(task, options, seed).fit(x_train, train[target].cast(pl.Float64).to_numpy())
        return float(r2_score(test[target].cast(pl.Float64).to_numpy(), model.predict(x_test)))
    classes = encoder.levels[target]
    code = {level: index for index, level in enumerate(classes)}
    y_train = np.array([code[v] for v in train[target].cast(pl.String)])
    y_test = np.array([code.get(v, -1) for v in test[target].cast(pl.String)])
    present = np.unique(y_train)
    probabilities = np.zeros((len(x_test), len(classes)))
    if len(present) == 1:  # a synthetic table with one class: a constant predictor
        probabilities[:, present[0]] = 1.0
    else:
        remap = {old: new for new, old in enumerate(present)}
        model = _xgb(task, options, seed).fit(x_train, np.array([remap[v] for v in y_train]))
        probabilities[:, present] = model.predict_proba(x_test)
    keep = y_test >= 0
    return auroc(y_test[keep], probabilities[keep])


def utility(
    train: pl.DataFrame,
    test: pl.DataFrame,
    synthetic: pl.DataFrame,
    target: str,
    task: Task,
    options: MetricOptions,
    seed: int,
    encoder: Encoder,
) -> dict[str, float]:
    """Held-out real score of xgboost trained on the synthetic table (`utility_synthetic`) and on the real one."""
    return {
        "utility_synthetic": _fit_score(synthetic, test, target, task, encoder, options, seed),
        "utility_real": _fit_score(train, test, target, task, encoder, options, seed),
    }


def detection(
    real: pl.DataFrame, synthetic: pl.DataFrame, encoder: Encoder, options: MetricOptions, seed: int
) -> float:
    """Cross-validated xgboost AUROC separating real rows (0) from synthetic rows (1), balanced classes.

    Identical rows share a fold (grouped folds), so a synthetic copy of a real row is never scored against its
    own twin with the other label (which would push a copied table's AUROC below 0.5 instead of to it).
    """
    from sklearn.model_selection import StratifiedGroupKFold

    rng = np.random.default_rng(seed)
    size = min(real.height, synthetic.height, options.max_detection_rows or real.height)
    x_real = encoder.matrix(real)[rng.permutation(real.height)[:size]]
    x_synth = encoder.matrix(synthetic)[rng.permutation(synthetic.height)[:size]]
    x = np.vstack([x_real, x_synth])
    y = np.repeat([0, 1], size)
    scores = []
    groups = np.unique(x, axis=0, return_inverse=True)[1].ravel()
    folds = StratifiedGroupKFold(options.folds, shuffle=True, random_state=seed)
    for train_rows, test_rows in folds.split(x, y, groups):
        model = _xgb("classification", options, seed).fit(x[train_rows], y[train_rows])
        scores.append(auroc(y[test_rows], model.predict_proba(x[test_rows])))
    return float(np.mean(scores))


def _log_density(fit_on: np.ndarray, points: np.ndarray) -> np.ndarray:
    from sklearn.neighbors import KernelDensity

    n, d = fit_on.shape
    bandwidth = n ** (-1.0 / (d + 4))  # Scott's rule on standardized columns
    return KernelDensity(bandwidth=bandwidth).fit(fit_on).score_samples(points)


def domias_auroc(
    train: pl.DataFrame, test: pl.DataFrame, synthetic: pl.DataFrame, encoder: Encoder, seed: int
) -> float:
    """DOMIAS membership-inference AUROC (KDE densities): members are training rows, non-members and the
    reference are disjoint halves of the held-out rows (members subsampled to the non-members' count)."""
    rng = np.random.default_rng(seed)
    x_train, x_test, x_synth = (encoder.matrix(frame) for frame in (train, test, synthetic))
    centre, scale = x_train.mean(axis=0), x_train.std(axis=0)
    scale[scale == 0] = 1.0
    x_train, x_test, x_synth = ((x - centre) / scale for x in (x_train, x_test, x_synth))
    order = rng.permutation(len(x_test))
    half = len(order) // 2
    reference, non_members = x_test[order[:half]], x_test[order[half:]]
    members = x_train[rng.permutation(len(x_train))[: len(non_members)]]
    points = np.vstack([members, non_members])
    score = _log_density(x_synth, points) - _log_density(reference, points)
    labels = np.repeat([1, 0], [len(members), len(non_members)])
    return auroc(labels, np.column_stack([-score, score]))


def _log_normal_prior(real: np.ndarray, points: np.ndarray) -> np.ndarray:
    """log density of an independent normal over the columns of `real` with ≥ 10 distinct values (DOMIAS's
    `normal_func_feat`: its "prior knowledge" reference); 0 when there is no such column."""
    from scipy import stats

    continuous = [j for j in range(real.shape[1]) if len(np.unique(real[:, j])) >= 10]
    if not continuous:
        return np.zeros(len(points))
    mean, sd = real[:, continuous].mean(axis=0), real[:, continuous].std(axis=0)
    sd[sd == 0] = 1.0
    return stats.norm.logpdf(points[:, continuous], mean, sd).sum(axis=1)


def domias_prior_auroc(
    train: pl.DataFrame, test: pl.DataFrame, synthetic: pl.DataFrame, encoder: Encoder, seed: int
) -> float:
    """synthcity's `DomiasMIA_prior` (the variant the paper plots): score log p_synth(x) − log p_prior(x), with
    p_prior an independent normal over the continuous columns fitted on all real rows (training and held-out);
    members and non-members as in `domias_auroc` (same draws). p_synth is the same KDE as there: synthcity's
    scipy `gaussian_kde` has no density on one-hot columns (a singular covariance)."""
    rng = np.random.default_rng(seed)
    x_train, x_test, x_synth = (encoder.matrix(frame) for frame in (train, test, synthetic))
    centre, scale = x_train.mean(axis=0), x_train.std(axis=0)
    scale[scale == 0] = 1.0
    x_train, x_test, x_synth = ((x - centre) / scale for x in (x_train, x_test, x_synth))
    order = rng.permutation(len(x_test))
    half = len(order) // 2
    non_members = x_test[order[half:]]
    members = x_train[rng.permutation(len(x_train))[: len(non_members)]]
    points = np.vstack([members, non_members])
    score = _log_density(x_synth, points) - _log_normal_prior(np.vstack([x_train, x_test]), points)
    labels = np.repeat([1, 0], [len(members), len(non_members)])
    return auroc(labels, np.column_stack([-score, score]))


def nearest_distances(rows: np.ndarray, to: np.ndarray) -> np.ndarray:
    """Each row's Euclidean distance to its nearest neighbour in `to` (k-d tree: computed exactly, whereas brute
    force goes through BLAS, whose rounding varies with its threading)."""
    from sklearn.neighbors import NearestNeighbors

    distances, _ = NearestNeighbors(n_neighbors=1, algorithm="kd_tree").fit(to).kneighbors(rows)
    return distances[:, 0]


def dcr(
    train: pl.DataFrame, test: pl.DataFrame, synthetic: pl.DataFrame, encoder: Encoder
) -> dict[str, float]:
    """Median distance to closest record: training rows → synthetic, and two references: held-out → training
    (ours) and training → held-out (the official R scripts')."""
    x_train, x_test = encoder.matrix(train), encoder.matrix(test)
    return {
        "dcr_median": float(np.median(nearest_distances(x_train, encoder.matrix(synthetic)))),
        "dcr_reference_median": float(np.median(nearest_distances(x_test, x_train))),
        "dcr_reference_official_median": float(np.median(nearest_distances(x_train, x_test))),
    }


def _cramers_v(first: np.ndarray, second: np.ndarray) -> float:
    from scipy import stats

    _, a = np.unique(first, return_inverse=True)
    _, b = np.unique(second, return_inverse=True)
    counts = np.zeros((a.max() + 1, b.max() + 1))
    np.add.at(counts, (a, b), 1)
    if min(counts.shape) < 2:
        return 0.0
    chi2 = stats.chi2_contingency(counts, correction=False).statistic
    return float(np.sqrt(chi2 / (counts.sum() * (min(counts.shape) - 1))))


def _correlation_ratio(groups: np.ndarray, values: np.ndarray) -> float:
    total = ((values - values.mean()) ** 2).sum()
    if total == 0:
        return 0.0
    _, inverse = np.unique(groups, return_inverse=True)
    means = np.bincount(inverse, weights=values) / np.bincount(inverse)
    between = (np.bincount(inverse) * (means - values.mean()) ** 2).sum()
    return float(np.sqrt(between / total))


def association_matrix(table: pl.DataFrame, spec: TableSpec, numeric: str = "abs_spearman") -> np.ndarray:
    """Pairwise association of the columns: numeric pairs by |Spearman| (in [0, 1]) or signed Pearson
    (`numeric="pearson"`, in [−1, 1]), categorical pairs by Cramér's V, mixed pairs by the correlation ratio."""
    from scipy import stats

    columns = spec.columns
    matrix = np.eye(len(columns))
    for i, first in enumerate(columns):
        for j in range(i + 1, len(columns)):
            second = columns[j]
            a, b = table[first].to_numpy(), table[second].to_numpy()
            kinds = (first in spec.categorical, second in spec.categorical)
            if kinds == (False, False):
                if numeric == "pearson":
                    constant = np.ptp(a.astype(float)) == 0 or np.ptp(b.astype(float)) == 0
                    rho = np.nan if constant else stats.pearsonr(a.astype(float), b.astype(float)).statistic
                    value = 0.0 if np.isnan(rho) else float(rho)
                else:
                    rho = stats.spearmanr(a, b).statistic
                    value = 0.0 if np.isnan(rho) else abs(float(rho))
            elif kinds == (True, True):
                value = _cramers_v(a.astype(str), b.astype(str))
            else:
                groups, values = (a, b) if kinds[0] else (b, a)
                value = _correlation_ratio(groups.astype(str), values.astype(float))
            matrix[i, j] = matrix[j, i] = value
    return matrix


def association_error(
    real: pl.DataFrame, synthetic: pl.DataFrame, spec: TableSpec, numeric: str = "abs_spearman"
) -> float:
    """Mean |Δ| over the column pairs of the association matrices (`numeric`: see `association_matrix`)."""
    if len(spec.columns) < 2:
        return 0.0
    upper = np.triu_indices(len(spec.columns), 1)
    delta = association_matrix(real, spec, numeric) - association_matrix(synthetic, spec, numeric)
    return float(np.abs(delta)[upper].mean())


def marginal_distances(real: pl.DataFrame, synthetic: pl.DataFrame, spec: TableSpec) -> dict[str, float]:
    """Mean KS statistic (numeric columns) and mean total variation (categorical columns); NaN when none."""
    from scipy import stats

    with warnings.catch_warnings():  # small samples: scipy notes it switches to the asymptotic p-value
        warnings.simplefilter("ignore", RuntimeWarning)
        ks = [stats.ks_2samp(real[c].to_numpy(), synthetic[c].to_numpy()).statistic for c in spec.numeric]
    tv = []
    for column in spec.categorical:
        p = real[column].cast(pl.String).value_counts(normalize=True, name="p")
        q = synthetic[column].cast(pl.String).value_counts(normalize=True, name="q")
        joined = (
            p.join(q, on=column, how="full", coalesce=True).fill_null(0.0).sort(column)
        )  # fixed sum order
        tv.append(0.5 * float((joined["p"] - joined["q"]).abs().sum()))
    return {
        "ks_mean": float(np.mean(ks)) if ks else float("nan"),
        "tv_mean": float(np.mean(tv)) if tv else float("nan"),
    }


def evaluate(
    train: pl.DataFrame,
    test: pl.DataFrame,
    synthetic: pl.DataFrame,
    target: str | None,
    task: Task,
    options: MetricOptions,
    seed: int,
    spec: TableSpec | None = None,
) -> dict[str, float]:
    """Every metric of a synthetic table (utility only with a `target`)."""
    spec = spec or infer_spec(train, where="training table")
    check_matches(test, spec, "held-out table")
    check_matches(synthetic, spec, "synthetic table")
    encoder = Encoder.of(train, spec)
    metrics = {
        "detection_auroc": detection(test, synthetic, encoder, options, seed),
        "mia_auroc": domias_auroc(train, test, synthetic, encoder, seed),
        "mia_prior_auroc": domias_prior_auroc(train, test, synthetic, encoder, seed),
        **dcr(train, test, synthetic, encoder),
        "association_error": association_error(train, synthetic, spec),
        "association_error_pearson": association_error(train, synthetic, spec, "pearson"),
        **marginal_distances(train, synthetic, spec),
    }
    if target is not None:
        metrics.update(utility(train, test, synthetic, target, task, options, seed, encoder))
    return metrics
