"""Performance separability: are two score distributions (one per mode, over seeds) distinguishable?

Two permutation tests, both vectorised over all permutations at once:
- Kolmogorov–Smirnov: statistic max |F_a − F_b| of the empirical CDFs; permutations reassign the pooled scores
  to the two groups; p = share of permutations whose statistic is ≥ the observed one.
- paired Wilcoxon signed-rank: statistic T+ (sum of ranks of |a − b| where a > b, zero differences dropped);
  permutations swap each pair's members (flip its sign); two-sided p = share of |T − E[T]| ≥ the observed.

Each test is *exact* when the distinct permutations (C(n_a + n_b, n_a) group assignments, 2ⁿ sign patterns)
number at most max(B, `EXACT_LIMIT`): all of them are enumerated and p is the exact share, observed one
included. Otherwise B random permutations give the Monte-Carlo p = (1 + k) / (1 + B), k = draws at least as
extreme as the observed (the observed arrangement counts as one), so p is never 0. `smallest_possible_p` is
the smallest p the test as run can return (2 / C or 2 / 2ⁿ exact, 1 / (1 + B) Monte-Carlo): no p-value is
ever below it. Bonferroni multiplies each p and the floor by the number of pairs tested (capped at 1); a pair
is *separable* when both tests reject at α.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy.stats import rankdata

from stages.core.seeding import derive_seed
from stages.methods.graphs.config import AuditConfig, SeparabilityConfig

_TIE = 1e-12
EXACT_LIMIT = 2**16
"""Enumerate every permutation when there are at most this many (or at most B), whatever B is: 65,536
arrangements cost less than a second, and the exact p has no Monte-Carlo noise (14 paired seeds: 16,384)."""


@dataclass(frozen=True)
class TestResult:
    """One permutation test: the observed statistic, its p-value, the smallest p the test as run can return,
    whether every permutation was enumerated (else `resamples` random ones) and how many were scored."""

    statistic: float
    p_value: float
    smallest_possible_p: float
    exact: bool = True
    resamples: int = 1


def enumerates(arrangements: int, permutations: int) -> bool:
    """Whether a test with this many distinct arrangements is run exactly rather than by `permutations` draws."""
    return arrangements <= max(permutations, EXACT_LIMIT)


def monte_carlo_p(extreme: int, permutations: int) -> float:
    """(1 + k) / (1 + B): the observed arrangement counts among the draws, so p ≥ 1 / (1 + B) > 0."""
    return (1 + extreme) / (1 + permutations)


def ks_statistics(values: np.ndarray, in_first: np.ndarray) -> np.ndarray:
    """KS statistic for each row of a boolean group assignment (rows × len(values))."""
    order = np.argsort(values, kind="stable")
    member = np.atleast_2d(in_first)[:, order]
    n_first = member[0].sum()
    n_second = member.shape[1] - n_first
    gap = np.cumsum(member, axis=1) / n_first - np.cumsum(~member, axis=1) / n_second
    sorted_values = values[order]
    block_ends = np.r_[
        np.abs(np.diff(sorted_values)) > _TIE, True
    ]  # compare CDFs only between distinct values
    return np.abs(gap[:, block_ends]).max(axis=1)


def all_assignments(n_first: int, n_total: int) -> np.ndarray:
    """Every way to put `n_first` of `n_total` values in the first group (C(n_total, n_first) × n_total)."""
    chosen = np.array(list(itertools.combinations(range(n_total), n_first)), dtype=np.int64)
    member = np.zeros((len(chosen), n_total), dtype=bool)
    np.put_along_axis(member, chosen.reshape(len(chosen), -1), True, axis=1)
    return member


def ks_permutation_test(first: np.ndarray, second: np.ndarray, permutations: int, seed: int) -> TestResult:
    """Two-sample KS permutation test of the score sets `first` and `second` (exact when affordable)."""
    pooled = np.concatenate([first, second]).astype(np.float64)
    observed_groups = np.arange(len(pooled)) < len(first)
    observed = float(ks_statistics(pooled, observed_groups)[0])
    assignments = math.comb(len(pooled), len(first))
    if enumerates(assignments, permutations):
        permuted = ks_statistics(pooled, all_assignments(len(first), len(pooled)))
        smallest = (2 if len(first) == len(second) else 1) / assignments
        return TestResult(observed, float(np.mean(permuted >= observed - _TIE)), smallest, True, assignments)
    rng = np.random.default_rng(seed)
    shuffled = np.argsort(rng.random((permutations, len(pooled))), axis=1) < len(first)
    extreme = int(np.sum(ks_statistics(pooled, shuffled) >= observed - _TIE))
    return TestResult(
        observed, monte_carlo_p(extreme, permutations), 1 / (1 + permutations), False, permutations
    )


def all_sign_patterns(n: int) -> np.ndarray:
    """Every 0/1 pattern of length `n` (2ⁿ × n), row i the binary digits of i."""
    return (np.arange(2**n)[:, None] >> np.arange(n)) & 1


def wilcoxon_permutation_test(
    first: np.ndarray, second: np.ndarray, permutations: int, seed: int
) -> TestResult:
    """Paired Wilcoxon signed-rank test by sign swaps of the pairs (`first[i]` with `second[i]`): every sign
    pattern when affordable (exact), else `permutations` random ones."""
    differences = np.asarray(first, np.float64) - np.asarray(second, np.float64)
    differences = differences[np.abs(differences) > _TIE]
    if len(differences) == 0:
        return TestResult(0.0, 1.0, 1.0, True, 1)
    ranks = rankdata(np.abs(differences))
    observed = float(ranks[differences > 0].sum())
    centre = ranks.sum() / 2
    threshold = abs(observed - centre) - _TIE
    patterns = 2 ** len(ranks)
    if enumerates(patterns, permutations):
        statistics = all_sign_patterns(len(ranks)) @ ranks
        p_value = float(np.mean(np.abs(statistics - centre) >= threshold))
        return TestResult(observed, p_value, min(1.0, 2 / patterns), True, patterns)
    rng = np.random.default_rng(seed)
    permuted = rng.integers(0, 2, size=(permutations, len(ranks))) @ ranks
    extreme = int(np.sum(np.abs(permuted - centre) >= threshold))
    return TestResult(
        observed, monte_carlo_p(extreme, permutations), 1 / (1 + permutations), False, permutations
    )


def mode_pairs(modes: list[str], pairs: str, reference: str = "original") -> list[tuple[str, str]]:
    """The (mode, mode) pairs to test."""
    if pairs == "all":
        return [(a, b) for index, a in enumerate(modes) for b in modes[index + 1 :]]
    return [(reference, mode) for mode in modes if mode != reference]


def compare_modes(scores: pl.DataFrame, config: SeparabilityConfig, seed: int) -> pl.DataFrame:
    """Test every mode pair of one score table (columns mode, seed, score); Bonferroni over the pairs.

    Scores are paired by seed for the Wilcoxon test, so each mode needs the same seeds.
    """
    by_mode = {
        mode: frame.sort("seed") for (mode,), frame in scores.partition_by("mode", as_dict=True).items()
    }
    modes = list(dict.fromkeys(scores["mode"].to_list()))
    pairs = mode_pairs(modes, config.pairs)
    rows = []
    for first_mode, second_mode in pairs:
        first, second = by_mode[first_mode], by_mode[second_mode]
        if first["seed"].to_list() != second["seed"].to_list():
            raise ValueError(f"modes {first_mode} and {second_mode} have different seeds; the test is paired")
        a, b = first["score"].to_numpy(), second["score"].to_numpy()
        test_seed = derive_seed(seed, "separability", first_mode, second_mode)
        for name, result in (
            ("ks", ks_permutation_test(a, b, config.permutations, test_seed)),
            ("wilcoxon", wilcoxon_permutation_test(a, b, config.permutations, test_seed)),
        ):
            adjusted = min(1.0, result.p_value * len(pairs))
            rows.append(
                {
                    "mode_a": first_mode,
                    "mode_b": second_mode,
                    "test": name,
                    "statistic": result.statistic,
                    "p_value": result.p_value,
                    "p_adjusted": adjusted,
                    "significant": adjusted < config.alpha,
                    "alpha": config.alpha,
                    "smallest_possible_p_adjusted": min(1.0, result.smallest_possible_p * len(pairs)),
                    "exact": result.exact,
                    "resamples": result.resamples,
                    "mean_a": float(a.mean()),
                    "mean_b": float(b.mean()),
                    "n_seeds": len(a),
                    "hypotheses": len(pairs),
                }
            )
    return pl.DataFrame(rows)


def separable_pairs(results: pl.DataFrame) -> pl.DataFrame:
    """One row per mode pair: separable when both tests reject after correction."""
    return (
        results.group_by(
            [column for column in results.columns if column in ("dataset", "model", "mode_a", "mode_b")]
        )
        .agg(
            pl.col("significant").all().alias("separable"),
            pl.col("p_adjusted").filter(pl.col("test") == "ks").first().alias("p_ks"),
            pl.col("p_adjusted").filter(pl.col("test") == "wilcoxon").first().alias("p_wilcoxon"),
            pl.col("mean_a").first(),
            pl.col("mean_b").first(),
        )
        .sort(pl.all())
    )


def separability_results(runs: pl.DataFrame, config: AuditConfig, seed: int) -> pl.DataFrame:
    """Mode-pair tests per dataset and model, on `config.metric`."""
    frames = []
    for (dataset, model), group in runs.sort("dataset", "model").group_by(
        "dataset", "model", maintain_order=True
    ):
        scores = group.select("mode", "seed", pl.col(config.metric).alias("score"))
        order = {mode: index for index, mode in enumerate(config.modes)}
        scores = scores.sort(pl.col("mode").replace_strict(order, return_dtype=pl.Int64), "seed")
        tests = compare_modes(scores, config.separability, derive_seed(seed, dataset, model))
        frames.append(tests.select(pl.lit(dataset).alias("dataset"), pl.lit(model).alias("model"), pl.all()))
    return pl.concat(frames)
