"""Info-Coevolution's automatic stop rule, stated so the output explains itself.

The paper's rule (kept as the default) is absolute: stop once the total remaining gain Σ (1 − fused confidence)
over the unlabelled rows is at most `stop_gain` = 1. Relative to the pool that is a tiny bar: with N unlabelled
rows the maximum total gain is N, so the rule asks for an average gain of at most 1 / N per unlabelled row —
nearly every remaining sample predicted with full confidence. On a task where the model stays unsure of many
rows the total stays far above 1 and the budget cap ends the run; :func:`stop_rule_note` says so with numbers.
"""

from __future__ import annotations

from stages.methods.selection.online.info_coevolution import InfoCoevolutionOptions
from stages.papers.info_coevolution.params import InfoCoevolutionParams


def stop_threshold(params: InfoCoevolutionParams) -> float:
    """The `stop_gain` of the Info-Coevolution run kind the claims judge (its option, else the default)."""
    options = params.strategies[params.claims.info_coevolution].options
    return float(options.get("stop_gain", InfoCoevolutionOptions().stop_gain))


def stop_rule_note(
    stop_gain: float, pool_size: int, annotated: int, remaining_gain: float | None, fired: bool
) -> str:
    """One run's stop rule in words: the absolute threshold, what it means per unlabelled row, and — when the
    rule did not fire — how far the remaining gain was from it when the run ended."""
    unlabelled = max(pool_size - annotated, 1)
    rule = (
        f"the paper's absolute rule: total remaining gain ≤ {stop_gain:g}, i.e. ≤ {stop_gain / unlabelled:.2g} "
        f"per unlabelled row on average ({unlabelled:,} unlabelled rows, gain per row in [0, 1])"
    )
    if fired:
        return f"fired at {annotated:,} annotations under {rule}"
    if remaining_gain is None:
        return f"did not fire by {annotated:,} annotations; no remaining gain was recorded ({rule})"
    return (
        f"did not fire: at {annotated:,} annotations (the run's end) the remaining gain was {remaining_gain:.3g}, "
        f"{remaining_gain / max(stop_gain, 1e-12):.3g}× the threshold ({remaining_gain / unlabelled:.2g} per "
        f"unlabelled row); under {rule}, the model was still unsure of too many rows for the rule to fire"
    )
