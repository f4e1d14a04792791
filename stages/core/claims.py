"""Claims with uncertainty: each paper's `claims` stage checks the paper's own claims at this scale.

A claim ends in one of three verdicts:

- `holds`: every compared quantity's interval lies wholly on the side the paper claims;
- `fails`: some compared quantity's interval lies wholly on the wrong side;
- `inconclusive`: otherwise — an interval straddles its threshold (the difference is inside the seed noise),
  or the design cannot decide (one seed, so no interval; a test whose smallest attainable p exceeds α).

A compared quantity is an :class:`Evidence`: its per-seed values, their mean, an interval (a Student t
interval over seeds unless it says otherwise) and the threshold it is judged against. The helpers here are
pure and take plain numbers, so tests check the maths on hand-computed values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator
from scipy import stats

from stages.core.io import read_json, write_json

Verdict = Literal["holds", "fails", "inconclusive"]
Direction = Literal["above", "below"]
Bound = Literal["exact", "lower", "upper"]
VERDICTS: tuple[Verdict, ...] = ("holds", "fails", "inconclusive")
MIN_SEEDS = 2
DEFAULT_CONFIDENCE = 0.95


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

    @field_validator("interval")
    @classmethod
    def _ordered(cls, interval: tuple[float, float] | None) -> tuple[float, float] | None:
        if interval is not None and interval[0] > interval[1]:
            raise ValueError(f"interval {interval}: lower end above upper end")
        return interval


class Claim(BaseModel):
    """One checked claim: the paper's statement, what was measured, the criterion, the verdict and why."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    statement: str = Field(min_length=1)
    measured: dict[str, Any]
    criterion: str = Field(min_length=1)
    verdict: Verdict
    reason: str = Field(min_length=1)
    evidence: list[Evidence] = Field(default_factory=list)

    @property
    def holds(self) -> bool:
        """Whether the verdict is `holds` (read-only; `fails` and `inconclusive` both read False)."""
        return self.verdict == "holds"


# ----------------------------------------------------------------------------------------------- intervals


def too_few_seeds(n: int, minimum: int = MIN_SEEDS) -> bool:
    """Whether `n` values are too few for an interval over seeds (a t interval needs two)."""
    return n < minimum


def t_interval(values: Sequence[float], confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float] | None:
    """Two-sided Student t interval of the mean of `values`; None when there are fewer than two values.

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
    """t interval of the mean paired difference `first − second` over seeds (None below two seeds)."""
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
    """Welch t interval of `mean_a − mean_b` from summary statistics (sample std, ddof 1); None if n < 2."""
    if too_few_seeds(n_a) or too_few_seeds(n_b):
        return None
    var_a, var_b = std_a**2 / n_a, std_b**2 / n_b
    difference = mean_a - mean_b
    if var_a + var_b == 0:
        return (difference, difference)
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


def compare(
    name: str,
    per_seed: Mapping[Any, float],
    threshold: float,
    direction: Direction,
    confidence: float = DEFAULT_CONFIDENCE,
    note: str = "",
) -> Evidence:
    """Judge the mean of per-seed values against a threshold through its t interval over seeds.

    Fewer than two seeds: no interval, the verdict is `inconclusive` (the design cannot decide).
    """
    values = {str(seed): float(value) for seed, value in per_seed.items()}
    array = list(values.values())
    interval = t_interval(array, confidence) if array else None
    verdict: Verdict = "inconclusive" if interval is None else judge(*interval, threshold, direction)
    return Evidence(
        name=name,
        per_seed=values,
        mean=float(np.mean(array)) if array else None,
        interval=interval,
        interval_kind=interval_kind(confidence),
        threshold=threshold,
        direction=direction,
        verdict=verdict,
        note=note,
    )


def compare_paired(
    name: str,
    first: Mapping[Any, float],
    second: Mapping[Any, float],
    threshold: float,
    direction: Direction,
    confidence: float = DEFAULT_CONFIDENCE,
    note: str = "",
) -> Evidence:
    """Judge the mean paired difference `first − second` (same seeds) against a threshold."""
    differences = paired_differences(
        {str(seed): value for seed, value in first.items()},
        {str(seed): value for seed, value in second.items()},
    )
    return compare(name, differences, threshold, direction, confidence, note)


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
) -> Evidence:
    """Like :func:`compare`, for values some of which are only bounded (censored), e.g. a count a run never
    reached within its budget.

    Each seed gives `(value, bound)`: bound `exact`, `lower` (the true value is at least `value`), or `upper`
    (at most); a value of None is unknown. The interval is computed on the bounds; a verdict stands only if
    the bounds cannot overturn it (`holds` for "above" needs exact or lower bounds only, `fails` exact or upper
    ones; mirrored for "below"), else the comparison is inconclusive. An unknown seed makes it inconclusive.
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
    evidence = compare(name, known, threshold, direction, confidence, "; ".join(notes))
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
        return f"{evidence.name}: {n} seed{'s' if n != 1 else ''}, too few for an interval{extra}"
    target = f"{_side(evidence.direction)} {_number(evidence.threshold)}"
    text = f"{evidence.name} = {interval_text(evidence)}"
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


def verdict_claim(
    id: str, statement: str, criterion: str, measured: dict[str, Any], evidence: Sequence[Evidence]
) -> Claim:
    """A claim whose verdict and reason follow from its evidence."""
    verdict, reason = decide(evidence)
    return Claim(
        id=id,
        statement=statement,
        measured=measured,
        criterion=criterion,
        verdict=verdict,
        reason=reason,
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
