"""TabSDS (Chaibub Neto, ICML 2025): marginals from interpolated order statistics, joint structure from
sequential joint-probability-preserving data shuffling (SJPPDS) and ranks.

The algorithm, as in the paper's code:

1. IOS, per numeric column: with nn = ⌊n·p⌋, ⌈n/nn⌉ times draw two disjoint random subsets of size nn, sort
   both and draw a uniform value between each pair of order statistics; keep n of the pooled draws.
2. SJPPDS, one round per column: cut every column into n_c equal-width bins, permute the rows of the other
   columns jointly within each bin of the last column, shuffle the rows, move the first column to the end
   (after the last round the columns are back in order).
3. Rank each shuffled numeric column (ties broken at random); the output column is the sorted IOS values
   taken at those ranks.

Categorical columns enter the shuffle as blocks of integer codes (level j of a column with counts c_1..c_L
gets the codes c_1+…+c_{j-1}+1 … c_1+…+c_j, in random order) and are decoded by block, so every level keeps
its count exactly. TabSJPPDS (the ablation) skips IOS: the numeric output is the original values at the
shuffled ranks. Everything here is pure NumPy on arrays; `TabSDS` wraps it for Polars tables.
"""

from __future__ import annotations

import math

import numpy as np


def ios_sample(values: np.ndarray, proportion: float, rng: np.random.Generator) -> np.ndarray:
    """n draws from the interpolated order statistics of `values` (each lies between two observed values)."""
    n = len(values)
    size = math.floor(n * proportion)
    if size < 1 or 2 * size > n:
        raise ValueError(f"IOS needs 1 ≤ ⌊n·p⌋ ≤ n/2; n = {n}, p = {proportion}")
    draws = []
    for _ in range(math.ceil(n / size)):
        order = rng.permutation(n)
        first = np.sort(values[order[:size]])
        second = np.sort(values[order[size : 2 * size]])
        draws.append(rng.uniform(np.minimum(first, second), np.maximum(first, second)))
    return rng.choice(np.concatenate(draws), n, replace=False)


def equal_width_bins(values: np.ndarray, n_levels: int) -> np.ndarray:
    """Bin index 0..n_levels-1 of each value over n_levels equal-width bins spanning [min, max]."""
    low, high = float(values.min()), float(values.max())
    if high <= low:
        return np.zeros(len(values), dtype=np.int64)
    scaled = (values - low) / (high - low) * n_levels
    return np.clip(np.floor(scaled), 0, n_levels - 1).astype(np.int64)


def jppds_round(matrix: np.ndarray, n_levels: int, rng: np.random.Generator) -> np.ndarray:
    """One shuffle: permute the other columns' rows jointly within each bin of the last column, then shuffle
    the rows."""
    bins = equal_width_bins(matrix[:, -1], n_levels)
    grouped = np.argsort(bins, kind="stable")
    permuted = np.lexsort((rng.random(len(bins)), bins))  # same bins, random order within each
    shuffled = matrix.copy()
    shuffled[grouped, :-1] = matrix[permuted, :-1]
    return shuffled[rng.permutation(len(shuffled))]


def sjppds(matrix: np.ndarray, n_levels: int, rng: np.random.Generator) -> np.ndarray:
    """Sequential JPPDS: one round per column, each with the next column last; columns end in their order."""
    shuffled = matrix.astype(np.float64, copy=True)
    for _ in range(matrix.shape[1]):
        shuffled = jppds_round(shuffled, n_levels, rng)
        shuffled = np.roll(shuffled, -1, axis=1)  # the first column moves to the end
    return shuffled


def random_ranks(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """0-based ranks of `values`, ties broken at random."""
    order = np.lexsort((rng.random(len(values)), values))
    ranks = np.empty(len(values), dtype=np.int64)
    ranks[order] = np.arange(len(values))
    return ranks


def rank_match(marginal: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """The sorted marginal values taken at `ranks` (0-based)."""
    return np.sort(marginal)[ranks]


def category_blocks(codes: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Block encoding of category codes: each level's rows get its block of consecutive integers in random
    order. Returns the encoding and each level's upper block end (exclusive), for :func:`decode_blocks`."""
    counts = np.bincount(codes)
    ends = np.cumsum(counts)
    encoded = np.empty(len(codes), dtype=np.float64)
    for level, count in enumerate(counts):
        rows = np.flatnonzero(codes == level)
        encoded[rows] = ends[level] - count + rng.permutation(count)
    return encoded, ends


def decode_blocks(encoded: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Category codes back from a (shuffled) block encoding."""
    return np.searchsorted(ends, encoded, side="right")


def synthesize_arrays(
    numeric: np.ndarray,
    codes: np.ndarray,
    n_levels: int,
    proportion: float,
    rng: np.random.Generator,
    use_ios: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """TabSDS on arrays: numeric (n × p_num) and category codes (n × p_cat) in, the same shapes out."""
    n = max(len(numeric), len(codes))
    blocks = [category_blocks(codes[:, j], rng) for j in range(codes.shape[1])]
    encoded = np.column_stack([block for block, _ in blocks]) if blocks else np.empty((n, 0))
    shuffled = sjppds(np.column_stack([numeric, encoded]), n_levels, rng)
    p_num = numeric.shape[1]
    out_numeric = np.empty_like(numeric, dtype=np.float64)
    for j in range(p_num):
        marginal = ios_sample(numeric[:, j], proportion, rng) if use_ios else numeric[:, j]
        out_numeric[:, j] = rank_match(marginal, random_ranks(shuffled[:, j], rng))
    out_codes = (
        np.column_stack([decode_blocks(shuffled[:, p_num + j], ends) for j, (_, ends) in enumerate(blocks)])
        if blocks
        else np.empty((n, 0), dtype=np.int64)
    )
    return out_numeric, out_codes
