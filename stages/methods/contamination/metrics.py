"""Question-level metrics of a benchmark update (Sun et al., ICML 2025): fidelity, contamination resistance and
their paired bootstrap intervals over questions, from 0/1 correctness vectors.

With v(model, benchmark) the 0/1 vector of which questions a model answers correctly:

- fidelity = mean(v[clean, original] == v[clean, updated]): the update keeps what the clean model gets right
  and wrong (vanilla, no update: 1);
- resistance = mean(v[clean, updated] == v[contaminated, updated]): on the updated questions the contaminated
  model behaves like the clean one (vanilla: mean(v[clean, original] == v[contaminated, original]), the
  baseline every strategy should beat).

Accuracy can stay put while answers flip both ways; both metrics see the flips.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

RESAMPLES = 2000


def as_vector(values: Sequence[int] | np.ndarray, name: str = "vector") -> np.ndarray:
    """A flat 0/1 correctness vector (ValueError naming `name` otherwise)."""
    array = np.asarray(values)
    if array.ndim != 1 or len(array) == 0:
        raise ValueError(f"{name}: expected a non-empty flat vector, got shape {array.shape}")
    if array.dtype == np.bool_:
        return array.astype(np.int8)
    if not np.isin(array, (0, 1)).all():
        bad = array[~np.isin(array, (0, 1))][:3].tolist()
        raise ValueError(f"{name}: values must be 0 or 1, found {bad}")
    return array.astype(np.int8)


def _same_length(*vectors: np.ndarray) -> None:
    lengths = {len(vector) for vector in vectors}
    if len(lengths) != 1:
        raise ValueError(f"correctness vectors must cover the same questions, got lengths {sorted(lengths)}")


def agreement(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Per question, 1 where the two vectors agree."""
    first, second = as_vector(first, "first"), as_vector(second, "second")
    _same_length(first, second)
    return (first == second).astype(np.int8)


def fidelity(clean_original: np.ndarray, clean_updated: np.ndarray) -> float:
    """mean(v[clean, original] == v[clean, updated])."""
    return float(agreement(clean_original, clean_updated).mean())


def resistance(clean_updated: np.ndarray, contaminated_updated: np.ndarray) -> float:
    """mean(v[clean, updated] == v[contaminated, updated])."""
    return float(agreement(clean_updated, contaminated_updated).mean())


def bootstrap_indices(n: int, resamples: int, seed: int) -> np.ndarray:
    """(resamples, n) question indices drawn with replacement (shared across paired quantities)."""
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def percentile_interval(draws: np.ndarray, confidence: float) -> tuple[float, float]:
    alpha = 1 - confidence
    lower, upper = np.quantile(draws, [alpha / 2, 1 - alpha / 2])
    return float(lower), float(upper)


@dataclass(frozen=True)
class Assessment:
    """One strategy's fidelity and resistance, the vanilla resistance and the difference, with bootstrap
    intervals over questions (the same resampled questions for every quantity: paired)."""

    n: int
    accuracy_clean_original: float
    accuracy_clean_updated: float
    accuracy_contaminated_original: float | None
    accuracy_contaminated_updated: float
    fidelity: float
    fidelity_interval: tuple[float, float]
    resistance: float
    resistance_interval: tuple[float, float]
    vanilla_resistance: float | None
    vanilla_resistance_interval: tuple[float, float] | None
    resistance_gain: float | None
    resistance_gain_interval: tuple[float, float] | None
    flips_clean: int

    def as_dict(self) -> dict:
        return {key: value for key, value in self.__dict__.items()}


def assess(
    clean_original: np.ndarray,
    clean_updated: np.ndarray,
    contaminated_updated: np.ndarray,
    contaminated_original: np.ndarray | None = None,
    confidence: float = 0.95,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> Assessment:
    """Fidelity and resistance of one update with paired bootstrap intervals over questions; with the
    contaminated model's original vector, also the vanilla resistance and resistance − vanilla."""
    vectors = {
        "clean_original": as_vector(clean_original, "clean_original"),
        "clean_updated": as_vector(clean_updated, "clean_updated"),
        "contaminated_updated": as_vector(contaminated_updated, "contaminated_updated"),
    }
    if contaminated_original is not None:
        vectors["contaminated_original"] = as_vector(contaminated_original, "contaminated_original")
    _same_length(*vectors.values())
    co, cu, xu = vectors["clean_original"], vectors["clean_updated"], vectors["contaminated_updated"]
    keep = (co == cu).astype(np.float64)
    resist = (cu == xu).astype(np.float64)
    rows = bootstrap_indices(len(co), resamples, seed)
    vanilla = gain = None
    vanilla_interval = gain_interval = None
    if contaminated_original is not None:
        base = (co == vectors["contaminated_original"]).astype(np.float64)
        vanilla = float(base.mean())
        vanilla_interval = percentile_interval(base[rows].mean(axis=1), confidence)
        gain = float(resist.mean() - base.mean())
        gain_interval = percentile_interval((resist - base)[rows].mean(axis=1), confidence)
    return Assessment(
        n=len(co),
        accuracy_clean_original=float(co.mean()),
        accuracy_clean_updated=float(cu.mean()),
        accuracy_contaminated_original=None
        if contaminated_original is None
        else float(vectors["contaminated_original"].mean()),
        accuracy_contaminated_updated=float(xu.mean()),
        fidelity=float(keep.mean()),
        fidelity_interval=percentile_interval(keep[rows].mean(axis=1), confidence),
        resistance=float(resist.mean()),
        resistance_interval=percentile_interval(resist[rows].mean(axis=1), confidence),
        vanilla_resistance=vanilla,
        vanilla_resistance_interval=vanilla_interval,
        resistance_gain=gain,
        resistance_gain_interval=gain_interval,
        flips_clean=int((co != cu).sum()),
    )
