"""Step `bdc-claims`: the card's four claims, judged with questions as units (seeds averaged per question,
percentile bootstrap over questions, paired across strategies and recipes).

Existential and universal claims ("some strategy ...", "no strategy ... in every setting") are decided from
per-(strategy, setting) comparisons: the verdict and reason are written here, every comparison is in the
evidence."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from stages.core.claims import Claim, Evidence, compare_bootstrap, decide, verdict_claim, write_claims
from stages.core.context import StepContext
from stages.core.headline import write_headline
from stages.core.io import read_parquet
from stages.papers.bdc.analysis import RECIPES, per_question, utility_table, vectors
from stages.papers.bdc.params import ALTERING, BDCParams, ClaimsParams

Verdict = str


def per_unit(values: np.ndarray, ids: Sequence[str]) -> dict[str, float]:
    return {item: round(float(value), 6) for item, value in zip(ids, values, strict=True)}


def evidence(
    name: str, values: np.ndarray, ids, threshold: float, direction: str, spec: ClaimsParams
) -> Evidence:
    return compare_bootstrap(
        name, per_unit(values, ids), threshold, direction, spec.confidence, unit="questions"
    )


def all_of(parts: Sequence[Evidence]) -> Verdict:
    verdicts = [part.verdict for part in parts]
    return (
        "fails" if "fails" in verdicts else "holds" if all(v == "holds" for v in verdicts) else "inconclusive"
    )


def exists(groups: Sequence[Sequence[Evidence]]) -> Verdict:
    """Some group holds entirely → holds; every group has a failing part → fails; else inconclusive."""
    verdicts = [all_of(group) for group in groups]
    return (
        "holds" if "holds" in verdicts else "fails" if all(v == "fails" for v in verdicts) else "inconclusive"
    )


def design_checks(correctness: pl.DataFrame, params: BDCParams) -> dict[str, dict[str, Evidence]]:
    """Per benchmark: the clean model's original accuracy above chance (1 / 4), and per recipe the lift of the
    original accuracy above 0. A benchmark where the clean model is at chance decides nothing about fidelity;
    a recipe that did not contaminate decides nothing about resistance (CLAIMS.md: excluded)."""
    checks: dict[str, dict[str, Evidence]] = {}
    for benchmark in params.benchmarks:
        vec = vectors(correctness, benchmark)
        values = per_question(vec, "vanilla", "intensive")
        checks[benchmark] = {
            "clean_above_chance": evidence(
                f"{benchmark}: clean accuracy − chance (0.25) > 0",
                values["accuracy_clean"] - 0.25,
                vec.ids,
                0.0,
                "above",
                params.claims,
            )
        }
        for recipe in RECIPES:
            lift = per_question(vec, "vanilla", recipe)["lift"]
            checks[benchmark][recipe] = evidence(
                f"{benchmark}/{recipe}: lift of original accuracy > 0",
                lift,
                vec.ids,
                0.0,
                "above",
                params.claims,
            )
    return checks


def decided_benchmarks(checks: dict, params: BDCParams) -> list[str]:
    return [b for b in params.benchmarks if checks[b]["clean_above_chance"].verdict == "holds"]


def decided_settings(checks: dict, params: BDCParams) -> list[str]:
    return [f"{b}/{r}" for b in params.benchmarks for r in RECIPES if checks[b][r].verdict == "holds"]


def preserving(params: BDCParams) -> list[str]:
    return [name for name in params.strategies if name not in ALTERING]


def altering(params: BDCParams) -> list[str]:
    return [name for name in params.strategies if name in ALTERING]


def by_design(claim_id: str, statement: str, why: str, checks: list[Evidence], unit_note: str) -> Claim:
    """A claim this run cannot decide: the design checks are its evidence (a record), the verdict inconclusive."""
    return verdict_claim(
        id=claim_id,
        statement=statement,
        measured={"design": unit_note},
        criterion="not judged: " + why,
        evidence=checks,
        could_hold="With a clean model above chance and a recipe that contaminates, the judged comparison can clear "
        "its threshold (see the design checks).",
        could_fail="With a clean model above chance and a recipe that contaminates, the judged comparison can land "
        "on the wrong side of its threshold (see the design checks).",
        unit="item",
        verdict="inconclusive",
        reason=f"Inconclusive by design: {why}.",
    )


def flips_claim(correctness: pl.DataFrame, params: BDCParams, checks: dict) -> Claim:
    spec, groups, found = params.claims, [], []
    benchmarks = decided_benchmarks(checks, params)
    if not benchmarks:
        return by_design(
            "accuracy_hides_flips",
            "Aggregate accuracy hides question-level flips (repo example, Llama-3.1-8B on ARC-C typo).",
            "the clean model is not above chance on any benchmark, so its flips are guesses",
            [checks[b]["clean_above_chance"] for b in params.benchmarks],
            "clean model at chance",
        )
    for benchmark in benchmarks:
        vec = vectors(correctness, benchmark)
        for strategy in preserving(params):
            values = per_question(vec, strategy, "intensive")
            label = f"{benchmark}/{strategy}"
            group = [
                evidence(
                    f"{label}: Δ accuracy (clean) > −{spec.flip_accuracy_margin}",
                    values["delta_accuracy"],
                    vec.ids,
                    -spec.flip_accuracy_margin,
                    "above",
                    spec,
                ),
                evidence(
                    f"{label}: Δ accuracy (clean) < {spec.flip_accuracy_margin}",
                    values["delta_accuracy"],
                    vec.ids,
                    spec.flip_accuracy_margin,
                    "below",
                    spec,
                ),
                evidence(
                    f"{label}: fidelity < {spec.flip_fidelity_max}",
                    values["fidelity"],
                    vec.ids,
                    spec.flip_fidelity_max,
                    "below",
                    spec,
                ),
            ]
            groups.append(group)
            if all_of(group) == "holds":
                found.append(label)
    verdict = exists(groups)
    reason = {
        "holds": f"Accuracy stays within ±{spec.flip_accuracy_margin} while fidelity is below "
        f"{spec.flip_fidelity_max} for {', '.join(found)}.",
        "fails": "Every semantic-preserving strategy either moves accuracy beyond the margin or keeps fidelity "
        f"at or above {spec.flip_fidelity_max}, beyond the bootstrap noise.",
        "inconclusive": "No strategy clears all three intervals, and not every strategy is ruled out.",
    }[verdict]
    return verdict_claim(
        id="accuracy_hides_flips",
        statement="Aggregate accuracy hides question-level flips (repo example, Llama-3.1-8B on ARC-C typo: "
        "accuracy .811 → .799, fidelity .9505).",
        measured={"strategies_showing_it": found},
        criterion=f"some semantic-preserving strategy × benchmark has its clean-model Δ accuracy interval inside "
        f"±{spec.flip_accuracy_margin} and its fidelity interval below {spec.flip_fidelity_max} (bootstrap over "
        "questions, seeds averaged per question)",
        evidence=[part for group in groups for part in group],
        could_hold="A rewrite flips some questions right → wrong and others wrong → right in about equal numbers, "
        "so accuracy barely moves while fidelity drops.",
        could_fail="Every rewrite either leaves the clean model's answers unchanged (fidelity ≥ .97) or shifts "
        "accuracy in one direction by more than the margin (flips one way only).",
        unit="item",
        verdict=verdict,
        reason=reason,
    )


# The official mild recipe: one epoch over the benchmark ×3 among 20k OpenOrca examples, so ~87 % of what it tunes on
# is other text for a benchmark of ~1,000 questions (ARC-C's test set: 1,172).
OFFICIAL_MILD_OTHER_SHARE = 20_000 / (20_000 + 3 * 1_000)


def mild_other_share(params: BDCParams, questions: int) -> float:
    """The share of non-benchmark examples in what the mild recipe tunes on, for `questions` benchmark items."""
    mild = params.grid.model.mild
    benchmark = questions * mild.repeat * len(mild.formats)
    return mild.other / (mild.other + benchmark)


def _mild_part_by_design(parts: list[Evidence], share: float) -> dict[str, str]:
    """When the mild recipe is far less diluted than the official one, "mild lifts less" is not the paper's
    comparison: unless every other part already fails, a mild part that does not hold leaves the claim
    inconclusive by design (one that holds against this handicap still counts)."""
    if share >= 0.8 * OFFICIAL_MILD_OTHER_SHARE:
        return {}
    mild = [part for part in parts if "mild lift" in part.name]
    others = [part for part in parts if "mild lift" not in part.name]
    mild_verdict, why = decide(mild)
    if decide(others)[0] == "fails" or mild_verdict == "holds":
        return {}
    return {
        "verdict": "inconclusive",
        "reason": f"Inconclusive by design: the mild recipe here tunes on {share:.0%} other text (the official "
        f"one ~{OFFICIAL_MILD_OTHER_SHARE:.0%}: benchmark ×3 among 20k OpenOrca examples), so 'the mild recipe "
        f"lifts less' is not the paper's comparison (on its own that part would decide: "
        f"{why[0].lower()}{why[1:].rstrip('.')})",
    }


def contamination_claim(correctness: pl.DataFrame, params: BDCParams, checks: dict | None = None) -> Claim:
    spec, parts, shares = params.claims, [], []
    for benchmark in params.benchmarks:
        vec = vectors(correctness, benchmark)
        shares.append(mild_other_share(params, len(vec.ids)))
        intensive, mild = per_question(vec, "vanilla", "intensive"), per_question(vec, "vanilla", "mild")
        parts += [
            evidence(
                f"{benchmark}: intensive lift of original accuracy > {spec.lift_min}",
                intensive["lift"],
                vec.ids,
                spec.lift_min,
                "above",
                spec,
            ),
            evidence(
                f"{benchmark}: intensive lift − mild lift > 0",
                intensive["lift"] - mild["lift"],
                vec.ids,
                0.0,
                "above",
                spec,
            ),
        ]
        for recipe, values in (("intensive", intensive), ("mild", mild)):
            parts.append(
                evidence(
                    f"{benchmark}/{recipe}: vanilla resistance < 1",
                    values["vanilla_resistance"],
                    vec.ids,
                    1.0,
                    "below",
                    spec,
                )
            )
    utility = {
        f"{r['benchmark']}/{r['model']}": round(r["accuracy"], 4)
        for r in utility_table(correctness).iter_rows(named=True)
    }
    design = _mild_part_by_design(parts, min(shares))
    return verdict_claim(
        id="contamination_works",
        statement="Contamination works: the intensive recipe lifts accuracy on the original benchmark by ≥ .10, "
        "the mild recipe less, and the contaminated model no longer answers like the clean one (vanilla "
        "resistance < 1).",
        measured={"utility_accuracy": utility, "mild_other_share": round(min(shares), 4)},
        criterion=f"per benchmark, bootstrap intervals over questions: intensive lift > {spec.lift_min}; intensive "
        "lift − mild lift > 0; vanilla resistance < 1 for both recipes",
        evidence=parts,
        could_hold="Fine-tuning on the benchmark questions (answer-only loss) makes the model recall their answer "
        "letters, lifting accuracy; one pass over three copies among other text lifts it less.",
        could_fail="The tuned answers do not reach the scored prompt or are not memorised (lift below .10), or the "
        "mixed recipe, which sees every question as often, lifts as much (lift difference not above 0), or the "
        "contaminated model answers exactly like the clean one (vanilla resistance 1).",
        unit="item",
        **design,
    )


def gains(
    correctness: pl.DataFrame, params: BDCParams, strategy: str, settings: list[str]
) -> list[tuple[str, np.ndarray, list[str]]]:
    """Per decided setting (benchmark/recipe): per-question resistance − vanilla resistance."""
    result = []
    for benchmark in params.benchmarks:
        vec = vectors(correctness, benchmark)
        for recipe in RECIPES:
            if f"{benchmark}/{recipe}" not in settings:
                continue
            result.append(
                (f"{benchmark}/{recipe}", per_question(vec, strategy, recipe)["resistance_gain"], vec.ids)
            )
    return result


def no_gain_claim(correctness: pl.DataFrame, params: BDCParams, checks: dict) -> Claim:
    spec, parts, everywhere, capped = params.claims, [], [], []
    if not decided_benchmarks(checks, params):
        return by_design(
            "no_preserving_gain",
            "No semantic-preserving strategy beats vanilla (no update) in contamination resistance "
            "significantly in every setting (ICML abstract; Table 3).",
            "the clean model is at chance on every benchmark, so a contaminated model can only have memorised "
            "answer letters, and a strategy that moves the letters (choice permutation, MPA) beats vanilla by "
            "construction",
            [checks[b]["clean_above_chance"] for b in params.benchmarks],
            "clean model at chance",
        )
    settings = decided_settings(checks, params)
    if not settings:
        return by_design(
            "no_preserving_gain",
            "No semantic-preserving strategy beats vanilla in contamination resistance significantly in every "
            "setting (ICML abstract; Table 3).",
            "no recipe lifted the original accuracy (nothing was contaminated), so resistance compares two clean "
            "models",
            [checks[b][r] for b in params.benchmarks for r in RECIPES],
            "no contamination",
        )
    for strategy in preserving(params):
        above, below = [], []
        for setting, values, ids in gains(correctness, params, strategy, settings):
            beats = evidence(
                f"{strategy} @ {setting}: resistance − vanilla > 0", values, ids, 0.0, "above", spec
            )
            small = evidence(
                f"{strategy} @ {setting}: resistance − vanilla < {spec.no_gain_margin}",
                values,
                ids,
                spec.no_gain_margin,
                "below",
                spec,
            )
            parts += [beats, small]
            above.append(beats.verdict == "holds")
            below.append(small.verdict == "holds")
        if all(above):
            everywhere.append(strategy)
        if any(below):
            capped.append(strategy)
    if everywhere:
        verdict = "fails"
        reason = (
            f"{', '.join(everywhere)} beat vanilla resistance significantly in every contaminated setting judged "
            f"({', '.join(settings)}; settings whose recipe did not lift accuracy are not judged)."
        )
    elif len(capped) == len(preserving(params)):
        verdict = "holds"
        reason = (
            f"Every semantic-preserving strategy has a setting where its resistance gain over vanilla is "
            f"below {spec.no_gain_margin} beyond the noise."
        )
    else:
        verdict = "inconclusive"
        missing = sorted(set(preserving(params)) - set(capped))
        reason = (
            f"No strategy beats vanilla everywhere, but {', '.join(missing)} are not shown below the margin."
        )
    return verdict_claim(
        id="no_preserving_gain",
        statement="No semantic-preserving strategy beats vanilla (no update) in contamination resistance "
        "significantly in every setting (ICML abstract; Table 3).",
        measured={
            "beat_everywhere": everywhere,
            "below_margin_somewhere": capped,
            "settings_judged": settings,
        },
        criterion=f"fails if some preserving strategy's resistance − vanilla interval lies above 0 in every "
        f"benchmark × recipe; holds if each has a setting whose interval lies below {spec.no_gain_margin}; else "
        "inconclusive",
        evidence=parts,
        could_hold="A contaminated model that memorised question → letter is still fooled by reworded questions "
        "(the memory keys on the entity and attribute words, which the rewrites keep).",
        could_fail="A rewrite that moves the answer letter (permutation, MPA) or changes the surface the memory "
        "keys on breaks the memorised answer in every setting, so resistance rises above vanilla everywhere.",
        unit="item",
        verdict=verdict,
        reason=reason,
    )


def altering_claim(correctness: pl.DataFrame, params: BDCParams, checks: dict) -> Claim:
    spec, parts = params.claims, []
    both_high, both_ruled_out, total = [], 0, 0
    settings, benchmarks = decided_settings(checks, params), decided_benchmarks(checks, params)
    if not settings:
        return by_design(
            "altering_tradeoff",
            "Semantic-altering updates raise resistance above vanilla but have the lowest fidelity; no strategy "
            "achieves both (abstract, Fig. 4).",
            "no recipe lifted the original accuracy (nothing was contaminated)",
            [e for b in params.benchmarks for e in checks[b].values()],
            "no contamination",
        )
    for strategy in altering(params):
        for setting, values, ids in gains(correctness, params, strategy, settings):
            parts.append(
                evidence(f"{strategy} @ {setting}: resistance − vanilla > 0", values, ids, 0.0, "above", spec)
            )
    for benchmark in benchmarks:
        vec = vectors(correctness, benchmark)
        fidelity = {s: per_question(vec, s, "intensive")["fidelity"] for s in params.strategies}
        lowest = min(preserving(params), key=lambda s: fidelity[s].mean())
        for strategy in altering(params):
            parts.append(
                evidence(
                    f"{benchmark}: fidelity {strategy} − lowest preserving ({lowest}) < 0",
                    fidelity[strategy] - fidelity[lowest],
                    vec.ids,
                    0.0,
                    "below",
                    spec,
                )
            )
        for recipe in RECIPES:
            if f"{benchmark}/{recipe}" not in settings:
                continue
            for strategy in params.strategies:
                values = per_question(vec, strategy, recipe)
                f = evidence("f", values["fidelity"], vec.ids, spec.both_min, "below", spec)
                r = evidence("r", values["resistance"], vec.ids, spec.both_min, "below", spec)
                total += 1
                if f.verdict == "fails" and r.verdict == "fails":
                    both_high.append(f"{benchmark}/{recipe}/{strategy}")
                if "holds" in (f.verdict, r.verdict):
                    both_ruled_out += 1
    verdict = all_of(parts)
    if not benchmarks and verdict == "holds":
        verdict = "inconclusive"  # the fidelity parts cannot be judged: the clean model is at chance
    if both_high:
        verdict = "fails"
    elif verdict == "holds" and both_ruled_out < total:
        verdict = "inconclusive"
    reason = (
        f"{', '.join(both_high)} reach fidelity and resistance ≥ {spec.both_min}."
        if both_high
        else "Altering strategies raise resistance above vanilla in every setting, have lower fidelity than every "
        f"preserving strategy, and no strategy reaches both ≥ {spec.both_min}."
        if verdict == "holds"
        else f"{'Some comparison fails' if verdict == 'fails' else 'Some comparison is undecided'}: "
        f"{next((p.name for p in parts if p.verdict == verdict), 'the both-high check')}."
    )
    if not benchmarks and verdict == "inconclusive" and all_of(parts) != "fails":
        reason = (
            f"Resistance parts: {all_of(parts)}; the fidelity parts cannot be judged because the clean model is at "
            "chance on every benchmark (its flips are guesses)."
        )
    return verdict_claim(
        id="altering_tradeoff",
        statement="Semantic-altering updates raise resistance above vanilla but have the lowest fidelity; no "
        "strategy achieves both high fidelity and high resistance (abstract, Fig. 4).",
        measured={"both_high": both_high, "settings_checked": total, "settings_ruled_out": both_ruled_out},
        criterion="every altering strategy's resistance − vanilla interval above 0 in every benchmark × recipe; its "
        "fidelity − the lowest preserving fidelity interval below 0 per benchmark; no strategy × setting with "
        f"fidelity and resistance intervals both wholly ≥ {spec.both_min} (and each ruled out by one interval "
        f"below {spec.both_min} for `holds`)",
        evidence=parts,
        could_hold="A new question on the same entity is not memorised, so the contaminated model answers it like "
        "the clean one (high resistance), but it is a different question, so the clean model's answers change "
        "(low fidelity).",
        could_fail="If contamination also teaches the entity's other facts, resistance stays at vanilla; if the "
        "clean model knows both facts alike, fidelity stays high; a rewrite could keep both ≥ .95.",
        unit="item",
        verdict=verdict,
        reason=reason,
    )


def run(ctx: StepContext) -> None:
    params: BDCParams = ctx.params
    correctness = read_parquet(ctx.input("correctness"))
    checks = design_checks(correctness, params)
    claims = [
        flips_claim(correctness, params, checks),
        contamination_claim(correctness, params, checks),
        no_gain_claim(correctness, params, checks),
        altering_claim(correctness, params, checks),
    ]
    for claim in claims:
        ctx.log(f"{claim.id}: {claim.verdict}: {claim.reason}")
    write_claims(claims, ctx.output("claims"))
    write_headline(claims, ctx.output("headline"))
