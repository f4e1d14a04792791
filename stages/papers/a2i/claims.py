"""Step `a2i-claims`: the card's claims, three-way verdicts over seeds (the unit of replication; 3 at default).

- `sampling_bias`: RNP selects a label-independent token at rates that differ by class: RNP's largest
  per-class selection-rate gap of `.` and `-` (the only tokens looked at) on the generated reviews' test set
  above `bias_gap`, judged by a t interval over seeds clipped to [0, 1] (a gap cannot leave it; a bootstrap
  over three seeds would be their observed range), and A2I's gap below RNP's (paired t interval over seeds).
- `inspection`: RNP's predictor can be attacked: dev attack success of RNP at least `attack_high` (reviews,
  Rotten Tomatoes). Inconclusive by design: on the reviews attack success is pooled over a balanced dev set
  where it cannot exceed 0.5 (the predictor answers "positive" when no negative word is selected, and positive
  reviews hold none), and Rotten Tomatoes decides nothing (even the full-input model is near chance there).
- `instruction`: A2I brings attack success to about chance: at most `attack_chance` (same sets). Inconclusive
  by design: the same cap of 0.5 makes it hold on the reviews whatever the instruction does (an artefact), and
  Rotten Tomatoes decides nothing.
- `f1_text`, `f1_graphs`: A2I beats RNP on rationale F1 (paired difference above 0) at similar sparsity
  (|Δ| within `sparsity_tolerance`) and accuracy (A2I at most `accuracy_tolerance` below) on the reviews and
  on the motif graphs: paired t intervals over seeds.

Attack success is recorded with a t interval over seeds clipped to [0, 1] (a share cannot leave it).
"""

from __future__ import annotations

import polars as pl

from stages.core.claims import (
    Claim,
    Evidence,
    compare,
    compare_paired,
    verdict_claim,
    write_claims,
)
from stages.core.context import StepContext
from stages.core.headline import write_headline
from stages.core.io import read_parquet
from stages.papers.a2i.params import A2IParams

ATTACKED = ("reviews", "rotten_tomatoes")
MODALITY = {"reviews": "text", "motifs": "graphs"}
CAP = (
    "on the generated reviews attack success is pooled over a balanced dev set and cannot exceed 0.5: the "
    "predictor answers 'positive' when no negative word is selected and positive reviews contain none, so an "
    "attacker can flip only the negative half"
)
ROTTEN = (
    "Rotten Tomatoes decides nothing at this scale: with random frozen word vectors even the full-input "
    "classifier stays near chance there (its accuracy is recorded beside)"
)


def per_seed(runs: pl.DataFrame, dataset: str, objective: str, column: str) -> dict[str, float]:
    rows = runs.filter((pl.col("dataset") == dataset) & (pl.col("objective") == objective)).sort("seed")
    return {
        str(seed): float(value)
        for seed, value in zip(rows["seed"], rows[column], strict=True)
        if value is not None
    }


def datasets_in(runs: pl.DataFrame, wanted) -> list[str]:
    present = set(runs["dataset"].unique().to_list())
    return [name for name in wanted if name in present]


def bias_claim(runs: pl.DataFrame, params: A2IParams) -> Claim:
    c = params.claims
    rnp, a2i = (
        per_seed(runs, "reviews", "rnp", "selection_gap"),
        per_seed(runs, "reviews", "a2i", "selection_gap"),
    )
    evidence = [
        compare(
            "RNP selection-rate gap of '.'/'-' (reviews, test)",
            rnp,
            c.bias_gap,
            "above",
            c.confidence,
            note="a gap in [0, 1]: its t interval over seeds is clipped to that range",
            bounds=(0.0, 1.0),
        ),
        compare_paired("A2I − RNP selection-rate gap", a2i, rnp, 0.0, "below", c.confidence),
    ]
    return verdict_claim(
        id="sampling_bias",
        statement="RNP's generator selects a label-independent token at different rates per class (sampling bias), "
        "and A2I reduces it.",
        measured={"rnp_gap": rnp, "a2i_gap": a2i},
        criterion="t interval over seeds (clipped to [0, 1]) of RNP's max |P(select | Y=1) − P(select | Y=0)| "
        f"over the "
        f"tokens '.' and '-' only, wholly above {c.bias_gap}; paired t interval over seeds of A2I − RNP gap "
        "wholly below 0",
        evidence=evidence,
        could_hold=f"RNP's generator picks '.' or '-' by class consistently enough across seeds that the gap's "
        f"interval clears {c.bias_gap}, and A2I's gap is smaller by more than the seed noise.",
        could_fail=f"RNP's gap of '.' and '-' stays below {c.bias_gap} on every seed (the reviews plant both "
        "tokens equally often in both classes), or A2I's gap exceeds RNP's beyond the noise; a bias through any "
        "other label-independent token is not looked at and cannot show.",
        unit="seed",
    )


def full_accuracy(runs: pl.DataFrame, dataset: str) -> dict[str, float]:
    """The full-input classifier's test accuracy per seed (empty when it was not run)."""
    if "full" not in set(runs["objective"].unique().to_list()):
        return {}
    return per_seed(runs, dataset, "full", "accuracy")


def attack_claim(runs: pl.DataFrame, params: A2IParams, objective: str) -> Claim:
    c = params.claims
    inspection = objective == "rnp"
    threshold = c.attack_high if inspection else c.attack_chance
    evidence: list[Evidence] = []
    measured: dict = {}
    for dataset in datasets_in(runs, ATTACKED):
        values = per_seed(runs, dataset, objective, "attack_success")
        measured[dataset] = values
        name = f"{objective.upper()} attack success on {dataset} (dev)"
        note = "capped at 0.5 on this balanced set (see the claim)" if dataset == "reviews" else ""
        if dataset == "rotten_tomatoes":
            full = full_accuracy(runs, dataset)
            measured["rotten_tomatoes_full_input_accuracy"] = full
            note = "decides nothing: the full-input classifier is near chance on this set"
        evidence.append(
            compare(
                name,
                values,
                threshold,
                "above" if inspection else "below",
                c.confidence,
                note,
                bounds=(0.0, 1.0),
            )
        )
    direction = "above" if inspection else "below"
    criterion = (
        f"t interval over seeds (clipped to [0, 1]) of {objective.upper()}'s dev attack success wholly {direction} "
        f"{threshold} on every text set; declared inconclusive by design ({CAP}; {ROTTEN})"
    )
    if inspection:
        return verdict_claim(
            id="inspection",
            statement="An attacker finds rationales that flip RNP's predictor to the opposite label.",
            measured=measured,
            criterion=criterion,
            evidence=evidence,
            could_hold=f"It cannot hold by construction: {CAP}, below the {threshold} it needs; {ROTTEN}.",
            could_fail="It fails on the reviews whatever RNP's predictor does (attack success there cannot reach "
            f"{threshold}), so a failure would say nothing about the paper's inspection.",
            unit="seed",
            verdict="inconclusive",
            reason=f"Inconclusive by design: {CAP}, so it can never reach {threshold}; {ROTTEN}.",
        )
    return verdict_claim(
        id="instruction",
        statement="Instructing the predictor (A2I) brings attack success to about chance.",
        measured=measured,
        criterion=criterion,
        evidence=evidence,
        could_hold=f"It holds on the reviews whatever the instruction does: {CAP}, already below {threshold}, "
        "so a hold is an artefact of the set.",
        could_fail=f"It cannot fail on the reviews by construction (attack success is capped at 0.5 < "
        f"{threshold}); it could fail only on Rotten Tomatoes, which decides nothing.",
        unit="seed",
        verdict="inconclusive",
        reason=f"Inconclusive by design: {CAP}, so it stays below {threshold} with or without the instruction "
        f"(an artefact); {ROTTEN}.",
    )


def f1_claim(runs: pl.DataFrame, params: A2IParams, dataset: str, claim_id: str) -> Claim:
    c = params.claims
    get = {
        (o, m): per_seed(runs, dataset, o, m) for o in ("rnp", "a2i") for m in ("f1", "sparsity", "accuracy")
    }
    evidence = [
        compare_paired(
            f"A2I − RNP rationale F1 ({dataset})",
            get["a2i", "f1"],
            get["rnp", "f1"],
            0.0,
            "above",
            c.confidence,
        ),
        compare_paired(
            f"A2I − RNP sparsity ({dataset})",
            get["a2i", "sparsity"],
            get["rnp", "sparsity"],
            c.sparsity_tolerance,
            "below",
            c.confidence,
        ),
        compare_paired(
            f"A2I − RNP sparsity ({dataset}), lower side",
            get["a2i", "sparsity"],
            get["rnp", "sparsity"],
            -c.sparsity_tolerance,
            "above",
            c.confidence,
        ),
        compare_paired(
            f"A2I − RNP accuracy ({dataset})",
            get["a2i", "accuracy"],
            get["rnp", "accuracy"],
            -c.accuracy_tolerance,
            "above",
            c.confidence,
        ),
    ]
    kind = "token" if dataset == "reviews" else "edge"
    return verdict_claim(
        id=claim_id,
        statement=f"A2I beats RNP on rationale F1 at similar sparsity ({MODALITY.get(dataset, dataset)}).",
        measured={f"{o}_{m}": v for (o, m), v in get.items()},
        criterion="paired t intervals over seeds: A2I − RNP F1 wholly above 0; sparsity difference within "
        f"±{c.sparsity_tolerance}; "
        f"accuracy difference wholly above −{c.accuracy_tolerance}",
        evidence=evidence,
        could_hold=f"A2I's {kind} F1 against the planted gold exceeds RNP's from the same initial nets by more "
        f"than the seed noise, while both track the same sparsity target within ±{c.sparsity_tolerance} and "
        f"A2I's accuracy stays within {c.accuracy_tolerance} of RNP's.",
        could_fail=f"RNP's F1 exceeds A2I's beyond the seed noise, or A2I's sparsity drifts more than "
        f"{c.sparsity_tolerance} from RNP's, or its accuracy falls more than {c.accuracy_tolerance} below; "
        "with three seeds and runs that sometimes do not learn, intervals are wide and inconclusive is likely.",
        unit="seed",
    )


def all_claims(runs: pl.DataFrame, params: A2IParams) -> list[Claim]:
    claims = [attack_claim(runs, params, "rnp"), attack_claim(runs, params, "a2i")]
    if "reviews" in params.grid.datasets:
        claims = [bias_claim(runs, params), *claims, f1_claim(runs, params, "reviews", "f1_text")]
    if "motifs" in params.grid.datasets:
        claims.append(f1_claim(runs, params, "motifs", "f1_graphs"))
    return claims


def run(ctx: StepContext) -> None:
    params: A2IParams = ctx.params
    claims = all_claims(read_parquet(ctx.input("runs")), params)
    for claim in claims:
        ctx.log(f"{claim.id}: {claim.verdict}: {claim.reason}")
    write_claims(claims, ctx.output("claims"))
    write_headline(claims, ctx.output("headline"))
