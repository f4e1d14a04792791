"""The `report` stage: gather every paper's claims into one readable Markdown report (`reports/claims.md`);
the `report-timings` stage does the same for the claims about wall-clock time (`reports/timings/claims.md`),
kept apart so that `reports/claims.md` is byte-identical on rerun."""

from __future__ import annotations

import math
from typing import Any

from stages.core.claims import VERDICTS, Claim, Evidence, interval_text, read_claims, verdict_counts
from stages.core.context import StepContext
from stages.core.io import write_text

REPORT_PATH = "reports/claims.md"
MAX_SEEDS_LISTED = 6

RULE = (
    "Each claim is checked at this scale and gets one of three verdicts. **holds**: every compared quantity's "
    "interval (its kind is named: t over ≥ 3 units, bootstrap or exact permutation over units, log-ratio, "
    "Wilson, or the observed range for every-run claims) lies wholly on the side of its threshold that the "
    "paper claims. **fails**: some compared quantity's interval lies wholly on the wrong side. "
    "**inconclusive**: otherwise — an interval contains its threshold (the difference is inside the noise), "
    "or the design cannot decide (a test whose smallest attainable p is not below α, or a design that makes "
    "one answer impossible, said in the claim). Beside each verdict: how the design could make the claim hold "
    "and fail, its unit and n, and **detectable**: per compared quantity the smallest departure from its "
    "threshold this design decides (the interval's half-width; for ratios in log units)."
)


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _number(value: float) -> str:
    return f"{value:.4g}"


def per_unit_text(per_seed: dict[str, float], unit: str = "seed") -> str:
    if not per_seed:
        return "—"
    values = list(per_seed.values())
    if len(values) > MAX_SEEDS_LISTED:
        units = unit + ("es" if unit.endswith("s") else "s")
        return f"{len(values)} {units}, {_number(min(values))} to {_number(max(values))}"
    return ", ".join(f"{seed}: {_number(value)}" for seed, value in per_seed.items())


def claimed_text(evidence: Evidence) -> str:
    if evidence.threshold is None or evidence.direction is None:
        return "—"
    return f"{'>' if evidence.direction == 'above' else '<'} {_number(evidence.threshold)}"


def estimate_text(evidence: Evidence) -> str:
    if evidence.mean is None:
        return "—"
    text = interval_text(evidence)
    if evidence.interval is None and evidence.threshold is not None:
        text += ", no interval"
    return f"{text} ({evidence.interval_kind})" if evidence.interval_kind else text


def evidence_table(evidence: list[Evidence], unit: str = "seed") -> list[str]:
    """The compared quantities of one claim as a small Markdown table (per-unit values named by `unit`)."""
    lines = [
        f"| compared quantity | per {unit} | mean [interval] | claimed | verdict | note |",
        "|---|---|---|---|---|---|",
    ]
    for item in evidence:
        cells = [
            item.name,
            per_unit_text(item.per_seed, unit),
            estimate_text(item),
            claimed_text(item),
            item.verdict,
            item.note or (item.interval_kind if item.interval is None and item.mean is None else ""),
        ]
        lines.append("| " + " | ".join(cell(text) for text in cells) + " |")
    return lines


def effect_text(claim: Claim, name: str) -> str:
    """One compared quantity's detectable effect: `±0.031`, `a factor of 1.5` (ratios), or `none at this n`."""
    effect = claim.detectable.get(name)
    if effect is None:
        return "none at this n"
    if any(item.name == name and "log-ratio" in item.interval_kind for item in claim.evidence):
        return f"a factor of {_number(math.exp(effect))}"
    return f"±{_number(effect)}"


def detectable_text(claim: Claim) -> str:
    """`gap: ±0.031; ratio: a factor of 1.5`: the smallest decidable effect per compared quantity."""
    if not claim.detectable:
        return "no compared quantity (nothing to decide)"
    return "; ".join(f"{name}: {effect_text(claim, name)}" for name in claim.detectable)


def design_lines(claim: Claim) -> list[str]:
    """The claim's design beside its verdict: unit and n, detectable, and how it could hold and fail."""
    return [
        f"Unit: {claim.unit}, n = {claim.n}. Detectable: {detectable_text(claim)}.",
        "",
        f"Could hold: {claim.could_hold} Could fail: {claim.could_fail}",
        "",
    ]


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [pair for key, item in value.items() for pair in _flatten(item, f"{prefix}{key}.")]
    return [(prefix.rstrip("."), value)]


def _measured_sentence(measured: dict[str, Any]) -> str:
    pairs = _flatten(measured)
    text = "; ".join(
        f"{key} = {_number(value) if isinstance(value, float) else value}" for key, value in pairs
    )
    return f"Measured: {text}."


def claim_section(claim: Claim) -> list[str]:
    """One claim: heading with the verdict, the paper's statement, the numbers, the verdict and why."""
    lines = [f"### `{claim.id}` — **{claim.verdict}**", "", f"> {claim.statement}", ""]
    if claim.evidence:
        lines += [*evidence_table(claim.evidence, claim.unit), ""]
    else:
        lines += [_measured_sentence(claim.measured), ""]
    lines += [f"**{claim.verdict.capitalize()}.** {claim.reason}", "", *design_lines(claim)]
    lines += [f"Criterion: {claim.criterion}.", ""]
    return lines


TIMING_NOTE = (
    "These claims rest on wall-clock seconds, which differ on every run and machine. They are judged by each "
    "paper's benchmark step `<id>-timing` from files under `timings/` that no data output reads; the other "
    "claims are in `reports/claims.md`."
)


def claims_table(
    claims_by_paper: dict[str, list[Claim]],
    title: str = "Claims across papers",
    source: str = "Generated by the `report` stage from each paper's `data/<id>/claims.json`.",
) -> str:
    """The claims report in Markdown: verdict counts, then per paper and claim the statement, the compared
    numbers with their intervals, the verdict in bold and why."""
    every = [claim for claims in claims_by_paper.values() for claim in claims]
    counts = verdict_counts(every)
    lines = [
        f"# {title}",
        "",
        source,
        "",
        RULE,
        "",
        "| paper | " + " | ".join(VERDICTS) + " |",
        "|---|" + "---|" * len(VERDICTS),
    ]
    for paper_id, claims in claims_by_paper.items():
        own = verdict_counts(claims)
        lines.append(f"| {paper_id} | " + " | ".join(str(own[verdict]) for verdict in VERDICTS) + " |")
    lines.append("| **all** | " + " | ".join(f"**{counts[verdict]}**" for verdict in VERDICTS) + " |")
    summary = ", ".join(f"{counts[verdict]} {verdict}" for verdict in VERDICTS)
    lines += ["", f"{len(every)} claims in {len(claims_by_paper)} papers: {summary}.", ""]
    for paper_id, claims in claims_by_paper.items():
        lines += [f"## {paper_id}", ""]
        if not claims:
            lines += ["No claims recorded.", ""]
        for claim in claims:
            lines += claim_section(claim)
    return "\n".join(lines).rstrip() + "\n"


def run(ctx: StepContext) -> None:
    """Read each paper's claims (the stage's deps, one per paper id) and write the report."""
    claims = {paper_id: read_claims(path) for paper_id, path in sorted(ctx.inputs.items())}
    write_text(claims_table(claims), ctx.output("report"))


def run_timings(ctx: StepContext) -> None:
    """Read each paper's claims about time (`timings/claims.json`) and write the timing report."""
    claims = {paper_id: read_claims(path) for paper_id, path in sorted(ctx.inputs.items())}
    source = f"Generated by the `report-timings` stage from `data/<id>/timings/claims.json`. {TIMING_NOTE}"
    write_text(claims_table(claims, "Claims about wall-clock time", source), ctx.output("report"))
