"""Claims with uncertainty: each paper's `claims` stage checks the paper's own claims at this scale.

A claim ends in one of three verdicts:

- `holds`: every compared quantity's interval lies wholly on the side the paper claims;
- `fails`: some compared quantity's interval lies wholly on the wrong side;
- `inconclusive`: otherwise — an interval straddles its threshold (the difference is inside the seed noise),
  or the design cannot decide (one seed, so no interval; a test whose smallest attainable p exceeds α).

A compared quantity is an :class:`Evidence`: its per-unit values (seeds, items, graphs, problems, ...), their
mean, an interval and the threshold it is judged against, and `detectable`: the smallest departure from the
threshold this design decides at its n (the interval's half-width; None when no effect can be decided). The
intervals follow `shared/CLAIMS.md`:

- a Student t interval over ≥ 3 units (:func:`compare`); fewer is refused, and the claim that asks for it raises
  :class:`DesignError` naming it;
- paired bootstrap (:func:`compare_bootstrap`) and exact paired sign-flip permutation intervals
  (:func:`compare_permutation`) over units, the bootstrap staying inside the values' range;
- the observed-range rule for "in every run" claims (:func:`compare_every`);
- log-ratio intervals for ratios, reported as geometric means (:func:`compare_ratio`);
- Wilson intervals for proportions (:func:`compare_proportion`), never outside [0, 1];
- a "best setting" test, the best setting against each named one, paired (:func:`compare_best`).

Every :class:`Claim` carries its design: how it `could_hold` and `could_fail`, its `unit`, `n` and `detectable`.
The helpers here are pure and take plain numbers, so tests check the maths on hand-computed values.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from stages.core.io import read_json, write_json

Verdict = Literal["holds", "fails", "inconclusive"]
Direction = Literal["above", "below"]
Bound = Literal["exact", "lower", "upper"]
Unit = Literal["seed", "item", "graph", "problem", "instance", "class", "dataset", "setting", "repeat"]
VERDICTS: tuple[Verdict, ...] = ("holds", "fails", "inconclusive")
MIN_SEEDS = 3
"""Fewest units a t interval is computed over: at 2 the 95 % multiplier is 12.7 (refused, see DesignError)."""
DEFAULT_CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 10_000
MIN_BOOTSTRAP_UNITS = 5
"""Fewest units a percentile bootstrap is computed over: below, its interval is little more than the observed
range (anti-conservative). For a bounded quantity over few seeds use `compare(..., bounds=(lo, hi))`."""
EXACT_PERMUTATION_LIMIT = 16
"""Up to this many units the sign-flip permutation distribution is enumerated (2^16 arrangements)."""


class DesignError(ValueError):
    """A claim asks for a test its design cannot support (e.g. a t interval over fewer than 3 units)."""


class Evidence(BaseModel):
    """One compared quantity: per-seed values, mean (and median for timings), interval, and how it is judged."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    per_seed: dict[str, float] = Field(default_factory=dict)
    mean: float | None = None
    median: float | None = None
    interval: tuple[float, float] | None = None
    interval_kind: str = ""
    threshold: float | None = None
    direction: Direction | None = None
    verdict: Verdict
    note: str = ""
    detectable: float | None = None
    refused: str = ""

    @field_validator("interval")
    @classmethod
    def _ordered(cls, interval: tuple[float, float] | None) -> tuple[float, float] | None:
        if interval is not None and interval[0] > interval[1]:
            raise ValueError(f"interval {interval}: lower end above upper end")
        return interval


class Claim(BaseModel):
    """One checked claim: the paper's statement, what was measured, the criterion, the verdict and why, and the
    design: how it could hold and fail, its unit of replication, `n` units, and `detectable` (per compared
    quantity, the smallest departure from its threshold this design decides; None: none can be decided)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    statement: str = Field(min_length=1)
    measured: dict[str, Any]
    criterion: str = Field(min_length=1)
    verdict: Verdict
    reason: str = Field(min_length=1)
    could_hold: str = Field(min_length=10)
    could_fail: str = Field(min_length=10)
    unit: Unit
    n: int = Field(ge=0)
    detectable: dict[str, float | None]
    evidence: list[Evidence] = Field(default_factory=list)

    @property
    def holds(self) -> bool:
        """Whether the verdict is `holds` (read-only; `fails` and `inconclusive` both read False)."""
        return self.verdict == "holds"


# ----------------------------------------------------------------------------------------------- intervals


def too_few_seeds(n: int, minimum: int = MIN_SEEDS) -> bool:
    """Whether `n` values are too few for a t interval over units (it needs three)."""
    return n < minimum


def t_interval(values: Sequence[float], confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float] | None:
    """Two-sided Student t interval of the mean of `values`; None when there are fewer than three values.

    mean ± t_{(1+c)/2, n−1} · s / √n with s the sample standard deviation (ddof 1). Identical values give a
    zero-width interval at their value.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence {confidence} must lie in (0, 1)")
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or not np.isfinite(array).all():
        raise ValueError(f"t_interval needs a flat list of finite numbers, got {values!r}")
    if too_few_seeds(len(array)):
        return None
    from scipy import stats  # lazily: scipy.stats costs ~1 s to import and most callers never judge

    mean = float(array.mean())
    half = float(
        stats.t.ppf((1 + confidence) / 2, len(array) - 1) * array.std(ddof=1) / math.sqrt(len(array))
    )
    return (mean - half, mean + half)


def paired_differences(first: Mapping[str, float], second: Mapping[str, float]) -> dict[str, float]:
    """Per seed, `first − second`; both must cover the same seeds (the comparison is paired)."""
    if set(first) != set(second):
        raise ValueError(f"paired values need the same seeds: {sorted(first)} vs {sorted(second)}")
    return {seed: float(first[seed]) - float(second[seed]) for seed in first}


def paired_t_interval(
    first: Mapping[str, float], second: Mapping[str, float], confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float, float] | None:
    """t interval of the mean paired difference `first − second` over seeds (None below three seeds)."""
    return t_interval(list(paired_differences(first, second).values()), confidence)


def welch_interval(
    mean_a: float,
    std_a: float,
    n_a: int,
    mean_b: float,
    std_b: float,
    n_b: int,
    confidence: float = DEFAULT_CONFIDENCE,
) -> tuple[float, float] | None:
    """Welch t interval of `mean_a − mean_b` from summary statistics (sample std, ddof 1); None if n < 3."""
    if too_few_seeds(n_a) or too_few_seeds(n_b):
        return None
    var_a, var_b = std_a**2 / n_a, std_b**2 / n_b
    difference = mean_a - mean_b
    if var_a + var_b == 0:
        return (difference, difference)
    from scipy import stats

    dof = (var_a + var_b) ** 2 / (var_a**2 / (n_a - 1) + var_b**2 / (n_b - 1))
    half = float(stats.t.ppf((1 + confidence) / 2, dof) * math.sqrt(var_a + var_b))
    return (difference - half, difference + half)


# ----------------------------------------------------------------------------------------------- verdicts


def judge(lower: float, upper: float, threshold: float, direction: Direction) -> Verdict:
    """`holds` if the whole interval is strictly on the claimed side of `threshold`, `fails` if it is wholly
    strictly on the wrong side, `inconclusive` otherwise (it contains the threshold)."""
    if lower > upper:
        raise ValueError(f"interval [{lower}, {upper}]: lower end above upper end")
    if direction == "above":
        return "holds" if lower > threshold else "fails" if upper < threshold else "inconclusive"
    if direction == "below":
        return "holds" if upper < threshold else "fails" if lower > threshold else "inconclusive"
    raise ValueError(f"direction {direction!r}: expected 'above' or 'below'")


def combine(verdicts: Sequence[Verdict]) -> Verdict:
    """Verdict of a claim that needs all its parts: any part fails → fails; all hold → holds; else inconclusive."""
    if not verdicts:
        return "inconclusive"
    if "fails" in verdicts:
        return "fails"
    return "holds" if all(verdict == "holds" for verdict in verdicts) else "inconclusive"


def interval_kind(confidence: float = DEFAULT_CONFIDENCE, over: str = "seeds") -> str:
    """The label of a t interval, e.g. `t 95% over seeds`."""
    return f"t {confidence:.0%} over {over}"


def half_width(interval: tuple[float, float] | None) -> float | None:
    """Half the width of an interval: the smallest departure from a threshold it can decide (None: none)."""
    return None if interval is None else (interval[1] - interval[0]) / 2


def _evidence(
    name: str,
    values: Mapping[str, float],
    interval: tuple[float, float] | None,
    kind: str,
    threshold: float,
    direction: Direction,
    note: str = "",
    mean: float | None = None,
    refused: str = "",
) -> Evidence:
    """An Evidence judged by its interval (inconclusive without one)."""
    array = list(values.values())
    verdict: Verdict = "inconclusive" if interval is None else judge(*interval, threshold, direction)
    return Evidence(
        name=name,
        per_seed=dict(values),
        mean=mean if mean is not None else (float(np.mean(array)) if array else None),
        interval=interval,
        interval_kind=kind,
        threshold=threshold,
        direction=direction,
        verdict=verdict,
        note=note,
        detectable=half_width(interval),
        refused=refused,
    )


def _floats(per_unit: Mapping[Any, float]) -> dict[str, float]:
    return {str(unit): float(value) for unit, value in per_unit.items()}


def compare(
    name: str,
    per_seed: Mapping[Any, float],
    threshold: float,
    direction: Direction,
    confidence: float = DEFAULT_CONFIDENCE,
    note: str = "",
    bounds: tuple[float, float] | None = None,
) -> Evidence:
    """Judge the mean of per-unit values against a threshold through its t interval over units.

    Fewer than three units: the t interval is refused (the evidence records why, and :func:`verdict_claim`
    raises :class:`DesignError` naming the claim): pick more units or another test. `bounds`: the range the
    quantity cannot leave (a share: (0, 1); a difference of shares: (−1, 1)); the interval is clipped to it,
    which keeps its coverage and drops impossible values.
    """
    values = _floats(per_seed)
    refused = ""
    if too_few_seeds(len(values)):
        refused = (
            f"a t interval over {len(values)} unit{'s' if len(values) != 1 else ''} (needs ≥ {MIN_SEEDS})"
        )
    interval = None if refused else t_interval(list(values.values()), confidence)
    kind = interval_kind(confidence)
    if interval is not None and bounds is not None:
        interval = (max(interval[0], bounds[0]), min(interval[1], bounds[1]))
        kind += f", clipped to [{_number(bounds[0])}, {_number(bounds[1])}]"
    return _evidence(name, values, interval, kind, threshold, direction, note, refused=refused)


def compare_paired(
    name: str,
    first: Mapping[Any, float],
    second: Mapping[Any, float],
    threshold: float,
    direction: Direction,
    confidence: float = DEFAULT_CONFIDENCE,
    note: str = "",
    bounds: tuple[float, float] | None = None,
) -> Evidence:
    """Judge the mean paired difference `first − second` (same units) against a threshold (t interval;
    `bounds`: the range the difference cannot leave, as in :func:`compare`)."""
    differences = paired_differences(_floats(first), _floats(second))
    return compare(name, differences, threshold, direction, confidence, note, bounds)


# ------------------------------------------------------------------------- bootstrap and permutation


def bootstrap_interval(
    values: Sequence[float],
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of `values` over units (resampled with replacement).

    Deterministic for a seed; a mean of values in [a, b] stays in [a, b], so a bounded quantity's interval
    never leaves its range.
    """
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or len(array) == 0 or not np.isfinite(array).all():
        raise ValueError(f"bootstrap_interval needs a non-empty flat list of finite numbers, got {values!r}")
    rng = np.random.default_rng(seed)
    means = array[rng.integers(0, len(array), size=(resamples, len(array)))].mean(axis=1)
    alpha = 1 - confidence
    lower, upper = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return float(lower), float(upper)


def compare_bootstrap(
    name: str,
    per_unit: Mapping[Any, float],
    threshold: float,
    direction: Direction,
    confidence: float = DEFAULT_CONFIDENCE,
    note: str = "",
    unit: str = "units",
) -> Evidence:
    """Judge the mean of per-unit values by a percentile bootstrap interval over units (at least
    `MIN_BOOTSTRAP_UNITS`; fewer is refused like a t interval over < 3)."""
    values = _floats(per_unit)
    kind = f"bootstrap {confidence:.0%} over {len(values)} {unit}"
    if len(values) < MIN_BOOTSTRAP_UNITS:
        refused = (
            f"a percentile bootstrap over {len(values)} {unit} (needs ≥ {MIN_BOOTSTRAP_UNITS}: below, it is the "
            "observed range); for a bounded quantity over few seeds use compare(..., bounds=(lo, hi))"
        )
        return _evidence(name, values, None, kind, threshold, direction, note, refused=refused)
    interval = bootstrap_interval(list(values.values()), confidence)
    return _evidence(name, values, interval, kind, threshold, direction, note)


def compare_paired_bootstrap(
    name: str,
    first: Mapping[Any, float],
    second: Mapping[Any, float],
    threshold: float,
    direction: Direction,
    confidence: float = DEFAULT_CONFIDENCE,
    note: str = "",
    unit: str = "units",
) -> Evidence:
    """Judge the mean paired difference `first − second` by a bootstrap interval over units."""
    differences = paired_differences(_floats(first), _floats(second))
    return compare_bootstrap(name, differences, threshold, direction, confidence, note, unit)


def sign_flip_means(differences: Sequence[float]) -> np.ndarray:
    """The mean of `differences` under every assignment of signs (2^n values; exact permutation null)."""
    array = np.asarray(differences, dtype=np.float64)
    if len(array) > EXACT_PERMUTATION_LIMIT:
        raise ValueError(f"{len(array)} units: exact enumeration is limited to {EXACT_PERMUTATION_LIMIT}")
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(array))))
    return signs @ array / len(array)


def permutation_p(
    differences: Sequence[float], alternative: Literal["greater", "less", "two-sided"]
) -> float:
    """Exact paired (sign-flip) permutation p-value of the mean difference against 0."""
    array = np.asarray(differences, dtype=np.float64)
    if len(array) == 0 or not np.isfinite(array).all():
        raise ValueError(f"permutation_p needs a non-empty list of finite numbers, got {differences!r}")
    null, observed = sign_flip_means(array), array.mean()
    tolerance = 1e-12 * max(1.0, float(np.abs(array).max()))
    if alternative == "greater":
        return float(np.mean(null >= observed - tolerance))
    if alternative == "less":
        return float(np.mean(null <= observed + tolerance))
    return float(np.mean(np.abs(null) >= abs(observed) - tolerance))


def smallest_permutation_p(n: int) -> float:
    """The smallest two-sided p an exact sign-flip test over n units can reach: 2 / 2^n."""
    return min(1.0, 2.0 / 2**n)


def permutation_interval(
    differences: Sequence[float], confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float, float] | None:
    """Interval of the mean paired difference by inverting the exact two-sided sign-flip test: the shifts δ
    for which `differences − δ` is not rejected at 1 − confidence. None when n is too small for any shift to
    be rejected (2 / 2^n ≥ α, i.e. n ≤ 5 at 95 %)."""
    array = np.asarray(differences, dtype=np.float64)
    alpha = 1 - confidence
    if smallest_permutation_p(len(array)) > alpha:
        return None
    mean = float(array.mean())
    span = float(array.max() - array.min()) or 1.0

    def accepted(shift: float) -> bool:
        return permutation_p(array - shift, "two-sided") > alpha

    def edge(outside: float) -> float:
        inside = mean
        for _ in range(60):
            middle = (inside + outside) / 2
            inside, outside = (middle, outside) if accepted(middle) else (inside, middle)
        return inside

    return edge(float(array.min()) - span), edge(float(array.max()) + span)


def compare_permutation(
    name: str,
    first: Mapping[Any, float],
    second: Mapping[Any, float],
    threshold: float,
    direction: Direction,
    confidence: float = DEFAULT_CONFIDENCE,
    note: str = "",
    unit: str = "units",
) -> Evidence:
    """Judge the mean paired difference `first − second` by the exact sign-flip permutation interval over
    units; with too few units for the test to reject anything it is inconclusive by design (said in the note)."""
    differences = paired_differences(_floats(first), _floats(second))
    interval = permutation_interval(list(differences.values()), confidence)
    if interval is None:
        floor = smallest_permutation_p(len(differences))
        note = "; ".join(
            filter(None, [note, f"{len(differences)} {unit}: smallest attainable p {floor:.3g} ≥ α"])
        )
    kind = f"exact permutation {confidence:.0%} over {len(differences)} {unit}"
    return _evidence(name, differences, interval, kind, threshold, direction, note)


# ------------------------------------------------------------------ every run, ratios, proportions, best


def compare_every(
    name: str,
    per_unit: Mapping[Any, float],
    threshold: float,
    direction: Direction,
    noise: Mapping[Any, float] | None = None,
    note: str = "",
    unit: str = "units",
) -> Evidence:
    """The observed-range rule for "in every run" claims: every unit strictly on the claimed side → holds; any
    unit on the wrong side by more than its own noise (0 when none is given) → fails; else inconclusive.

    The interval recorded is the observed range (min, max); `detectable` is the largest per-unit noise.
    """
    values = _floats(per_unit)
    if not values:
        raise ValueError(f"{name}: the range rule needs at least one unit")
    noises = {key: 0.0 for key in values} if noise is None else _floats(noise)
    if set(noises) != set(values):
        raise ValueError(f"{name}: noise must cover the same units: {sorted(values)} vs {sorted(noises)}")
    sign = 1.0 if direction == "above" else -1.0
    clears = {key: sign * (value - threshold) > 0 for key, value in values.items()}
    wrong = [key for key, value in values.items() if sign * (threshold - value) > noises[key]]
    verdict: Verdict = "fails" if wrong else "holds" if all(clears.values()) else "inconclusive"
    if wrong:
        note = "; ".join(filter(None, [note, f"on the wrong side beyond its noise: {', '.join(wrong)}"]))
    evidence = Evidence(
        name=name,
        per_seed=values,
        mean=float(np.mean(list(values.values()))),
        interval=(min(values.values()), max(values.values())),
        interval_kind=f"observed range over {len(values)} {unit} (every unit must clear)",
        threshold=threshold,
        direction=direction,
        verdict=verdict,
        note=note,
        detectable=max(noises.values()),
    )
    return evidence


def log_ratio_interval(
    ratios: Sequence[float], confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float, tuple[float, float] | None]:
    """Geometric mean of positive ratios and the t interval of their mean log, back on the ratio scale
    (None below three ratios)."""
    array = np.asarray(ratios, dtype=np.float64)
    if array.ndim != 1 or len(array) == 0 or not (np.isfinite(array) & (array > 0)).all():
        raise ValueError(f"ratios must be finite and positive, got {ratios!r}")
    logs = np.log(array)
    interval = t_interval(logs.tolist(), confidence)
    geometric = float(np.exp(logs.mean()))
    return geometric, None if interval is None else (math.exp(interval[0]), math.exp(interval[1]))


def compare_ratio(
    name: str,
    per_unit: Mapping[Any, float],
    threshold: float,
    direction: Direction,
    confidence: float = DEFAULT_CONFIDENCE,
    note: str = "",
    unit: str = "units",
) -> Evidence:
    """Judge positive ratios (speed-ups, cost ratios, max/min counts) on the log scale: the t interval of the
    mean log-ratio, reported as the geometric mean and its interval on the ratio scale. `detectable` is the
    interval's half-width in log units (a factor e^detectable)."""
    values = _floats(per_unit)
    refused = ""
    if too_few_seeds(len(values)):
        refused = f"a t interval over {len(values)} log-ratio{'s' if len(values) != 1 else ''} (needs ≥ {MIN_SEEDS})"
    geometric, interval = log_ratio_interval(list(values.values()), confidence)
    if refused:
        interval = None
    kind = f"t {confidence:.0%} over {len(values)} {unit} of the log-ratio (geometric mean)"
    evidence = _evidence(
        name, values, interval, kind, threshold, direction, note, mean=geometric, refused=refused
    )
    evidence.detectable = None if interval is None else math.log(interval[1] / interval[0]) / 2
    return evidence


def wilson_interval(successes: int, n: int, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval of a proportion successes / n; always inside [0, 1]."""
    if n <= 0 or not 0 <= successes <= n:
        raise ValueError(f"wilson_interval needs 0 ≤ successes ≤ n and n > 0, got {successes}/{n}")
    from scipy import stats

    z = float(stats.norm.ppf((1 + confidence) / 2))
    share = successes / n
    centre = (share + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * math.sqrt(share * (1 - share) / n + z**2 / (4 * n**2))
    lower = 0.0 if successes == 0 else max(0.0, centre - half)
    upper = 1.0 if successes == n else min(1.0, centre + half)
    return lower, upper


def compare_proportion(
    name: str,
    per_unit: Mapping[Any, bool],
    threshold: float,
    direction: Direction,
    confidence: float = DEFAULT_CONFIDENCE,
    note: str = "",
    unit: str = "units",
) -> Evidence:
    """Judge the share of units where an event happened (per-unit 0/1) through its Wilson interval."""
    values = {str(key): float(bool(value)) for key, value in per_unit.items()}
    interval = wilson_interval(int(sum(values.values())), len(values), confidence)
    kind = f"Wilson {confidence:.0%} over {len(values)} {unit}"
    return _evidence(name, values, interval, kind, threshold, direction, note)


def compare_best(
    name: str,
    per_setting: Mapping[Any, Mapping[Any, float]],
    named: Sequence[Any],
    direction: Direction = "above",
    confidence: float = DEFAULT_CONFIDENCE,
    method: Literal["t", "permutation", "bootstrap"] = "t",
    unit: str = "units",
) -> tuple[str, list[Evidence]]:
    """A "best setting" test: the setting with the best mean (highest for "above", lowest for "below") against
    each named setting other than itself, paired over units; the grid must contain every named setting.

    Returns the best setting and one Evidence per named setting (best − named, threshold 0); an untested
    argmax is not a finding, so a best that differs from a named one only inside the noise is inconclusive.
    """
    settings = {str(key): _floats(values) for key, values in per_setting.items()}
    missing = [str(setting) for setting in named if str(setting) not in settings]
    if missing:
        raise DesignError(f"{name}: the grid {sorted(settings)} lacks the named setting(s) {missing}")
    means = {key: float(np.mean(list(values.values()))) for key, values in settings.items()}
    best = (max if direction == "above" else min)(means, key=means.__getitem__)
    paired = {"t": compare_paired, "permutation": compare_permutation, "bootstrap": compare_paired_bootstrap}
    evidence = []
    for setting in map(str, named):
        if setting == best:
            continue
        label = f"{name}: best {best} − {setting}"
        extra = {} if method == "t" else {"unit": unit}
        evidence.append(
            paired[method](label, settings[best], settings[setting], 0.0, direction, confidence, **extra)
        )
    return best, evidence


def _valid_with_bounds(verdict: Verdict, bounds: set[Bound], direction: Direction) -> bool:
    """Whether a verdict computed from bounds stands for the true values (see :func:`compare_bounded`)."""
    toward = {"exact", "lower"} if direction == "above" else {"exact", "upper"}
    away = {"exact", "upper"} if direction == "above" else {"exact", "lower"}
    if verdict == "holds":
        return bounds <= toward
    if verdict == "fails":
        return bounds <= away
    return True


def compare_bounded(
    name: str,
    per_seed: Mapping[Any, tuple[float | None, Bound]],
    threshold: float,
    direction: Direction,
    confidence: float = DEFAULT_CONFIDENCE,
    note: str = "",
    limits: tuple[float, float] | None = None,
) -> Evidence:
    """Like :func:`compare`, for values some of which are only bounded (censored), e.g. a count a run never
    reached within its budget.

    Each seed gives `(value, bound)`: bound `exact`, `lower` (the true value is at least `value`), or `upper`
    (at most); a value of None is unknown. The interval is computed on the bounds; a verdict stands only if
    the bounds cannot overturn it (`holds` for "above" needs exact or lower bounds only, `fails` exact or upper
    ones; mirrored for "below"), else the comparison is inconclusive. An unknown seed makes it inconclusive.
    A design of ≥ 3 units whose outcome leaves fewer than 3 known values is inconclusive (not refused); a design
    of fewer units is refused as in :func:`compare`. `limits`: the range the quantity cannot leave (clipped).
    """
    known = {str(seed): value for seed, (value, _) in per_seed.items() if value is not None}
    unknown = [str(seed) for seed, (value, _) in per_seed.items() if value is None]
    bounds = {bound for value, bound in per_seed.values() if value is not None}
    censored = [
        str(seed) for seed, (value, bound) in per_seed.items() if value is not None and bound != "exact"
    ]
    notes = [note] if note else []
    if censored:
        notes.append(f"seed{'s' if len(censored) > 1 else ''} {', '.join(censored)} only bounded (censored)")
    if unknown:
        notes.append(f"seed{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} unknown")
    evidence = compare(name, known, threshold, direction, confidence, "; ".join(notes), limits)
    if evidence.refused and not too_few_seeds(len(per_seed)):  # the outcome, not the design, left too few
        evidence.refused = ""
        evidence.note = "; ".join(
            filter(
                None,
                [evidence.note, f"only {len(known)} of {len(per_seed)} units known, too few for an interval"],
            )
        )
    if unknown or not _valid_with_bounds(evidence.verdict, bounds, direction):
        evidence.verdict = "inconclusive"
    return evidence


def _number(value: float) -> str:
    return f"{value:.4g}"


def interval_text(evidence: Evidence) -> str:
    """`0.12 [0.05, 0.19]` (mean and its interval), the mean alone when there is no interval, and the median
    first when one is recorded (timings)."""
    if evidence.mean is None:
        return "no value"
    text = _number(evidence.mean)
    if evidence.interval is not None:
        lower, upper = evidence.interval
        text += f" [{_number(lower)}, {_number(upper)}]"
    if evidence.median is not None:
        text = f"median {_number(evidence.median)}, mean {text}"
    return text


def _side(direction: Direction | None) -> str:
    return {"above": ">", "below": "<"}.get(direction or "", "vs")


def evidence_reason(evidence: Evidence) -> str:
    """Why one comparison got its verdict, as a clause."""
    if evidence.threshold is None or evidence.direction is None:
        return f"{evidence.name}: {evidence.note or evidence.verdict}"
    if evidence.interval is None:
        n = len(evidence.per_seed)
        extra = f" ({evidence.note})" if evidence.note else ""
        return f"{evidence.name}: {n} unit{'s' if n != 1 else ''}, too few for an interval{extra}"
    target = f"{_side(evidence.direction)} {_number(evidence.threshold)}"
    text = f"{evidence.name} = {interval_text(evidence)}"
    if evidence.interval_kind.startswith("observed range"):
        lower, upper = evidence.interval
        span = f"{evidence.name}: every unit in [{_number(lower)}, {_number(upper)}]"
        if evidence.verdict == "holds":
            return f"{span}, each {target} as claimed"
        if evidence.verdict == "fails":
            return f"{span}, {evidence.note}"
        return f"{span}: some unit does not clear {target}, within its own noise"
    by_interval = judge(*evidence.interval, evidence.threshold, evidence.direction)
    if evidence.verdict == "inconclusive" and by_interval != "inconclusive":
        return f"{text} rests on bounds that cannot settle it against {target} ({evidence.note})"
    if evidence.verdict == "holds":
        return f"{text}, wholly {target} as claimed"
    if evidence.verdict == "fails":
        return f"{text}, wholly on the wrong side of {_number(evidence.threshold)} (claimed {target})"
    return f"{text} contains the threshold {_number(evidence.threshold)} (claimed {target}): inside the noise"


def _relative_margin(evidence: Evidence) -> float:
    """How far an interval clears its threshold, in interval widths (infinite without an interval)."""
    if evidence.interval is None or evidence.threshold is None or evidence.direction is None:
        return math.inf
    lower, upper = evidence.interval
    margin = lower - evidence.threshold if evidence.direction == "above" else evidence.threshold - upper
    return margin / max(upper - lower, 1e-12)


def decide(evidence: Sequence[Evidence]) -> tuple[Verdict, str]:
    """The claim's verdict from its parts (:func:`combine`) and a one-sentence reason naming the first part
    that decided it (and how many others agree)."""
    verdict = combine([item.verdict for item in evidence])
    if not evidence:
        return verdict, "Nothing was measured, so the claim cannot be decided."
    deciding = [item for item in evidence if item.verdict == verdict]
    first = evidence_reason(deciding[0])
    others = len(deciding) - 1
    if verdict == "holds":
        if len(evidence) == 1:
            return verdict, f"It holds: {first}."
        closest = min(evidence, key=_relative_margin)
        return (
            verdict,
            f"All {len(evidence)} compared quantities clear their thresholds; the closest: {evidence_reason(closest)}.",
        )
    more = f"; {others} more part{'s' if others > 1 else ''} {verdict if verdict == 'fails' else 'undecided'}"
    lead = "It fails because" if verdict == "fails" else "It is undecided because"
    return verdict, f"{lead} {first}{more if others else ''}."


def units_of(evidence: Sequence[Evidence]) -> int:
    """The claim's n: the fewest units any compared quantity rests on (0 without evidence)."""
    return min((len(item.per_seed) for item in evidence), default=0)


def detectable_of(evidence: Sequence[Evidence]) -> dict[str, float | None]:
    """Per compared quantity, the smallest departure from its threshold the design decides (None: none)."""
    return {item.name: item.detectable for item in evidence}


def verdict_claim(
    id: str,
    statement: str,
    criterion: str,
    measured: dict[str, Any],
    evidence: Sequence[Evidence],
    *,
    could_hold: str,
    could_fail: str,
    unit: Unit,
    n: int | None = None,
    detectable: dict[str, float | None] | None = None,
    verdict: Verdict | None = None,
    reason: str | None = None,
) -> Claim:
    """A claim whose verdict and reason follow from its evidence (or are given, for a claim that is
    `inconclusive` by design), with its design: how it could hold and fail, its unit, n (default: the fewest
    units of any compared quantity) and detectable (default: each compared quantity's interval half-width).

    Raises :class:`DesignError` naming the claim when a compared quantity asked for a refused test, unless the
    claim is given its verdict (inconclusive by design: its evidence is a record, the refusal stays in it).
    """
    refused = [f"{item.name}: {item.refused}" for item in evidence if item.refused]
    if refused and verdict is None:
        raise DesignError(f"claim '{id}': refused {'; '.join(refused)}; use more units or another test")
    decided, why = decide(evidence)
    return Claim(
        id=id,
        statement=statement,
        measured=measured,
        criterion=criterion,
        verdict=verdict or decided,
        reason=reason or why,
        could_hold=could_hold,
        could_fail=could_fail,
        unit=unit,
        n=units_of(evidence) if n is None else n,
        detectable=detectable_of(evidence) if detectable is None else detectable,
        evidence=list(evidence),
    )


# ------------------------------------------------------------------------------------------------ files

_CLAIMS = TypeAdapter(list[Claim])


def write_claims(claims: list[Claim], path: str | Path) -> None:
    """Write `claims.json` (a list of claims, validated, ids unique)."""
    ids = [claim.id for claim in claims]
    if len(ids) != len(set(ids)):
        raise ValueError(f"duplicate claim ids: {ids}")
    write_json([claim.model_dump(mode="json") for claim in claims], path)


def read_claims(path: str | Path) -> list[Claim]:
    """Read and validate a `claims.json` file."""
    return _CLAIMS.validate_python(read_json(path))


def verdict_counts(claims: Sequence[Claim]) -> dict[Verdict, int]:
    """How many claims got each verdict."""
    return {verdict: sum(claim.verdict == verdict for claim in claims) for verdict in VERDICTS}
