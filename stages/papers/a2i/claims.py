"""Step `a2i-claims`: the card's claims, three-way verdicts over seeds (t intervals).

- `sampling_bias`: RNP selects a label-independent token ("." or "-") at rates that differ by class: the
  largest gap on the generated reviews' test set above `bias_gap`, and A2I's gap below RNP's (paired by seed).
- `inspection`: RNP's predictor can be attacked: dev attack success of RNP at least `attack_high` (reviews,
  Rotten Tomatoes).
- `instruction`: A2I brings attack success to about chance: at most `attack_chance` (same sets).
- `f1_text`, `f1_graphs`: A2I beats RNP on rationale F1 (paired difference above 0) at similar sparsity
  (|Δ| within `sparsity_tolerance`) and accuracy (A2I at most `accuracy_tolerance` below) on the reviews and
  on the motif graphs.
"""

from __future__ import annotations

import polars as pl

from stages.core.claims import Claim, Evidence, compare, compare_paired, verdict_claim, write_claims
from stages.core.context import StepContext
from stages.core.headline import write_headline
from stages.core.io import read_parquet
from stages.papers.a2i.params import A2IParams

ATTACKED = ("reviews", "rotten_tomatoes")
MODALITY = {"reviews": "text", "motifs": "graphs"}


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
        compare("RNP selection-rate gap of '.'/'-' (reviews, test)", rnp, c.bias_gap, "above", c.confidence),
        compare_paired("A2I − RNP selection-rate gap", a2i, rnp, 0.0, "below", c.confidence),
    ]
    return verdict_claim(
        id="sampling_bias",
        statement="RNP's generator selects a label-independent token at different rates per class (sampling bias), "
        "and A2I reduces it.",
        measured={"rnp_gap": rnp, "a2i_gap": a2i},
        criterion=f"t interval of RNP's max |P(select | Y=1) − P(select | Y=0)| over '.', '-' wholly above "
        f"{c.bias_gap}; paired A2I − RNP gap wholly below 0",
        evidence=evidence,
    )


def attack_claim(runs: pl.DataFrame, params: A2IParams, objective: str) -> Claim:
    c = params.claims
    inspection = objective == "rnp"
    threshold = c.attack_high if inspection else c.attack_chance
    evidence: list[Evidence] = []
    measured = {}
    for dataset in datasets_in(runs, ATTACKED):
        values = per_seed(runs, dataset, objective, "attack_success")
        measured[dataset] = values
        name = f"{objective.upper()} attack success on {dataset} (dev)"
        evidence.append(compare(name, values, threshold, "above" if inspection else "below", c.confidence))
    if inspection:
        return verdict_claim(
            id="inspection",
            statement="An attacker finds rationales that flip RNP's predictor to the opposite label.",
            measured=measured,
            criterion=f"t interval of RNP's dev attack success wholly above {threshold} on every text set",
            evidence=evidence,
        )
    return verdict_claim(
        id="instruction",
        statement="Instructing the predictor (A2I) brings attack success to about chance.",
        measured=measured,
        criterion=f"t interval of A2I's dev attack success wholly below {threshold} on every text set",
        evidence=evidence,
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
    return verdict_claim(
        id=claim_id,
        statement=f"A2I beats RNP on rationale F1 at similar sparsity ({MODALITY.get(dataset, dataset)}).",
        measured={f"{o}_{m}": v for (o, m), v in get.items()},
        criterion="paired over seeds: A2I − RNP F1 wholly above 0; sparsity difference within "
        f"±{c.sparsity_tolerance}; "
        f"accuracy difference wholly above −{c.accuracy_tolerance}",
        evidence=evidence,
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
