"""Step `a2i-claims`: the card's claims, three-way verdicts over seeds (the unit of replication; 5 at default).

Rules fixed before any run (README, Claims):

- A set decides a claim only if the full-input classifier reads its label: mean dev accuracy over seeds of the
  `full` objective at least `informative_accuracy` (0.7). A set below (Rotten Tomatoes with random word
  vectors: 0.58) is listed in the claim's `measured` with its accuracy and decides nothing.
- `sampling_bias`: RNP's generator leaves the label-bearing words (the target aspect's sentiment words of the
  review's label) out of one class's rationales: per seed, |share of class-1 test rationales without one −
  share of class-0 ones|; RNP's gap above `bias_gap` (t interval over seeds clipped to [0, 1]) and A2I's gap
  below RNP's (paired t interval over seeds).
- `inspection`: the trained attacker flips RNP's predictor in *both* classes: its worst-class dev attack
  success (the class the attacker flips least) at least `attack_high` (t interval over seeds clipped to
  [0, 1]). The planted rationale (the other aspect's opposite-polarity words alone) is recorded beside, not
  judged: it tells, when the attacker falls short, whether a flip exists that it missed. Pooled attack success
  over a balanced set is recorded beside but not judged: a predictor that defaults to one class on
  uninformative rationales is flipped on every row of the other class and none of its own (0.5 pooled).
- `instruction`: A2I leaves no class open to the attacker: its dev attack success in the class flipped most at
  most `attack_chance`. Judged only where `inspection` holds (else inconclusive by that rule): where RNP is
  not shown attackable, a low attack success after A2I says nothing about the instruction.
- `f1_text`, `f1_graphs`: A2I beats RNP on rationale F1 (paired difference above 0) at similar sparsity
  (|Δ| within `sparsity_tolerance`) and accuracy (A2I at most `accuracy_tolerance` below): paired t intervals.
  `f1_graphs` is inconclusive by design at the default scale (budget: the graph runs mostly do not learn),
  judged at `scale: full`.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from stages.core.claims import Claim, Evidence, compare, compare_paired, verdict_claim, write_claims
from stages.core.context import StepContext
from stages.core.headline import write_headline
from stages.core.io import read_parquet
from stages.papers.a2i.params import A2IParams

ATTACKED = ("reviews", "rotten_tomatoes")
MODALITY = {"reviews": "text", "motifs": "graphs"}
SHARE = (0.0, 1.0)
GRAPH_BUDGET = (
    "at the default scale (the 5-minute budget: 5 seeds of 700 graphs, 12 epochs) the graph rationalizers "
    "mostly do not learn (RNP's and A2I's test accuracy stays near 1/2 on most seeds, so their F1 is that of "
    "a chance selection at the target sparsity) and the paired interval over seeds is wider than any F1 "
    "difference between runs that learn; only `scale: full` can decide it (the evidence is recorded)"
)
GRAPHS_AT_FULL = (
    "the motif graphs run only at `scale: full` (`a2i.default.datasets` leaves them out): within the default "
    "5-minute budget the graph rationalizers do not learn (5 seeds of 700 graphs, 12 epochs: RNP's and A2I's "
    "test accuracy stayed near 1/2 on most seeds), so their F1 would compare chance selections, and the "
    "budget goes to the reviews instead"
)
LABEL_BEARING = (
    "label-bearing token: a word of the target aspect's sentiment vocabulary with the review's polarity "
    "(positive words in a positive review, negative words in a negative one); the other aspect's "
    "opposite-polarity words do not count"
)


def per_seed(runs: pl.DataFrame, dataset: str, objective: str, column: str) -> dict[str, float]:
    """One value per seed of `column` for a data set and objective (missing values left out)."""
    rows = runs.filter((pl.col("dataset") == dataset) & (pl.col("objective") == objective)).sort("seed")
    if column not in rows.columns:
        return {}
    return {
        str(seed): float(value)
        for seed, value in zip(rows["seed"], rows[column], strict=True)
        if value is not None and not np.isnan(value)
    }


def full_accuracy(runs: pl.DataFrame, dataset: str) -> dict[str, float]:
    """The full-input classifier's dev accuracy per seed (empty when it was not run)."""
    return per_seed(runs, dataset, "full", "dev_accuracy")


def informative(runs: pl.DataFrame, params: A2IParams, dataset: str) -> tuple[bool, str]:
    """Whether `dataset` may decide a claim (the full-input rule) and a sentence saying why."""
    accuracy = full_accuracy(runs, dataset)
    threshold = params.claims.informative_accuracy
    if not accuracy:
        return True, f"{dataset}: no full-input run, the informativeness rule is unchecked"
    mean = float(np.mean(list(accuracy.values())))
    if mean < threshold:
        return False, (
            f"{dataset} decides nothing: its full-input classifier reaches a mean dev accuracy of {mean:.2f} "
            f"< {threshold} (the rule fixed before the run)"
        )
    return True, f"{dataset}: full-input dev accuracy {mean:.2f} ≥ {threshold}"


def present(runs: pl.DataFrame, wanted) -> list[str]:
    """The data sets of `wanted` that were run, in that order."""
    names = set(runs["dataset"].unique().to_list())
    return [name for name in wanted if name in names]


def bias_claim(runs: pl.DataFrame, params: A2IParams) -> Claim:
    """`sampling_bias` on the generated reviews (the only set whose label-bearing words are known)."""
    c = params.claims
    rnp = per_seed(runs, "reviews", "rnp", "no_label_token_gap")
    a2i = per_seed(runs, "reviews", "a2i", "no_label_token_gap")
    measured = {
        f"{objective}_{quantity}": per_seed(runs, "reviews", objective, quantity)
        for objective in ("rnp", "a2i")
        for quantity in ("no_label_token_0", "no_label_token_1", "no_label_token_gap")
    }
    evidence = [
        compare(
            "RNP gap: share of rationales without a label-bearing token, class 1 vs 0 (reviews, test)",
            rnp,
            c.bias_gap,
            "above",
            c.confidence,
            note="a gap of two shares lies in [0, 1]: its t interval over seeds is clipped to that range",
            bounds=SHARE,
        ),
        compare_paired("A2I − RNP gap (reviews, test)", a2i, rnp, 0.0, "below", c.confidence),
    ]
    usable, why = informative(runs, params, "reviews")
    extra = {} if usable else {"verdict": "inconclusive", "reason": f"Inconclusive by design: {why}."}
    return verdict_claim(
        id="sampling_bias",
        statement="RNP's generator selects rationales whose content depends on the class in a way the data does "
        "not (sampling bias), and A2I reduces it.",
        measured={**measured, "informative": why},
        criterion="per seed, |P(rationale has no label-bearing token | Y=1) − P(… | Y=0)| on the reviews' test "
        f"set ({LABEL_BEARING}); RNP's t interval over seeds (clipped to [0, 1]) wholly above {c.bias_gap}; "
        "paired t interval over seeds of A2I − RNP gap wholly below 0",
        evidence=evidence,
        could_hold="RNP's generator selects the label-bearing words in one class's reviews and leaves them out "
        "in the other's (its predictor reading their absence as that class), on every seed, and A2I's gap is "
        "smaller beyond the seed noise.",
        could_fail=f"Both classes' rationales carry a label-bearing word about equally often (gap below "
        f"{c.bias_gap} on the seeds: every review plants three in its gold span), or A2I's gap is not "
        "smaller than RNP's.",
        unit="seed",
        **extra,
    )


def attack_evidence(runs: pl.DataFrame, params: A2IParams, objective: str, dataset: str) -> Evidence:
    """Inspection: RNP's worst-class attack success; instruction: A2I's attack success in its most-flipped class."""
    c = params.claims
    inspection = objective == "rnp"
    column = "attack_success_worst" if inspection else "attack_success_best"
    which = "worst-class (least flipped)" if inspection else "most-flipped class"
    return compare(
        f"{objective.upper()} {which} attack success on {dataset} (dev)",
        per_seed(runs, dataset, objective, column),
        c.attack_high if inspection else c.attack_chance,
        "above" if inspection else "below",
        c.confidence,
        note="a share: its t interval over seeds is clipped to [0, 1]",
        bounds=SHARE,
    )


def attack_measured(runs: pl.DataFrame, objective: str, datasets, why: dict[str, str]) -> dict:
    """Pooled and per-class dev attack success per seed of each set (trained attacker, and on the reviews the
    planted rationale), and each set's informativeness."""
    columns = (
        "attack_success",
        "attack_success_0",
        "attack_success_1",
        "planted_attack_0",
        "planted_attack_1",
    )
    return {
        dataset: {
            **{column: per_seed(runs, dataset, objective, column) for column in columns},
            "full_input_dev_accuracy": full_accuracy(runs, dataset),
            "informative": why[dataset],
        }
        for dataset in datasets
    }


def inspection_sets(runs: pl.DataFrame, params: A2IParams) -> list[str]:
    """The attacked text sets that were run and pass the informativeness rule (inspection's evidence order)."""
    return [dataset for dataset in present(runs, ATTACKED) if informative(runs, params, dataset)[0]]


def inspection_claim(runs: pl.DataFrame, params: A2IParams) -> Claim:
    """`inspection`: the attacker flips RNP's predictor in both classes of every informative text set."""
    c = params.claims
    datasets = present(runs, ATTACKED)
    checks = {dataset: informative(runs, params, dataset) for dataset in datasets}
    usable = inspection_sets(runs, params)
    evidence = [attack_evidence(runs, params, "rnp", dataset) for dataset in usable]
    extra = {}
    if not usable:
        reasons = "; ".join(why for _, why in checks.values()) or "no text set was run"
        extra = {"verdict": "inconclusive", "reason": f"Inconclusive by design: {reasons}."}
    return verdict_claim(
        id="inspection",
        statement="An attacker finds rationales that flip RNP's predictor to the opposite label.",
        measured=attack_measured(runs, "rnp", datasets, {d: why for d, (_, why) in checks.items()}),
        criterion=f"on every informative text set, the t interval over seeds (clipped to [0, 1]) of RNP's dev "
        f"attack success in its least-flipped class wholly above {c.attack_high}, for the attacker trained "
        "beside RNP (the paper's protocol); pooled attack success and the planted rationale (the other "
        "aspect's opposite-polarity words alone) are recorded, not judged",
        evidence=evidence,
        could_hold="The attacker selects words (the other aspect's opposite-polarity word is in every review of "
        f"both classes) that RNP's predictor follows, so both classes are flipped on more than "
        f"{c.attack_high} of their dev rows.",
        could_fail="RNP's predictor reads the aspect or the whole span rather than lone sentiment words, so in "
        "one class no selection the attacker finds flips it (the planted rationale, recorded beside, tells "
        "whether a flip existed that the attacker missed).",
        unit="seed",
        **extra,
    )


def instruction_claim(runs: pl.DataFrame, params: A2IParams, inspection: Claim) -> Claim:
    """`instruction`: after A2I no class stays open to the attacker, judged only where inspection holds."""
    c = params.claims
    datasets = present(runs, ATTACKED)
    checks = {dataset: informative(runs, params, dataset) for dataset in datasets}
    judged = inspection_sets(runs, params) if inspection.verdict == "holds" else []
    evidence = [attack_evidence(runs, params, "a2i", dataset) for dataset in (judged or datasets)]
    extra = {}
    if not judged:
        extra = {
            "verdict": "inconclusive",
            "reason": "Inconclusive by the design rule: the instruction is judged only on sets where inspection "
            "holds (RNP attackable in both classes), and it holds on none here, so a low attack success after "
            "A2I would not show what the instruction does (A2I's numbers are recorded beside).",
        }
    return verdict_claim(
        id="instruction",
        statement="Instructing the predictor (A2I) brings attack success to about chance.",
        measured=attack_measured(runs, "a2i", datasets, {d: why for d, (_, why) in checks.items()}),
        criterion=f"on every informative text set where inspection holds, the t interval over seeds (clipped to "
        f"[0, 1]) of A2I's dev attack success in its most-flipped class wholly below {c.attack_chance}; "
        "inconclusive where inspection does not hold",
        evidence=evidence,
        could_hold="The instruction term teaches the predictor to ignore the other aspect's opposite-polarity "
        f"word the attacker selects, so neither class is flipped on more than {c.attack_chance} of its rows.",
        could_fail=f"The attacker still flips one class (or both) on more than {c.attack_chance} of its rows "
        "after A2I (the weakness moved to the other class, or stayed).",
        unit="seed",
        **extra,
    )


def f1_claim(runs: pl.DataFrame, params: A2IParams, dataset: str, claim_id: str) -> Claim:
    """A2I vs RNP rationale F1 at similar sparsity and accuracy on one set (paired over seeds)."""
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
    usable, why = informative(runs, params, dataset)
    extra = {} if usable else {"verdict": "inconclusive", "reason": f"Inconclusive by design: {why}."}
    if usable and dataset == "motifs" and params.scale == "default":
        extra = {"verdict": "inconclusive", "reason": f"Inconclusive by design: {GRAPH_BUDGET}."}
    kind = "token" if dataset == "reviews" else "edge"
    return verdict_claim(
        id=claim_id,
        statement=f"A2I beats RNP on rationale F1 at similar sparsity ({MODALITY.get(dataset, dataset)}).",
        measured={**{f"{o}_{m}": v for (o, m), v in get.items()}, "informative": why},
        criterion="paired t intervals over seeds: A2I − RNP F1 wholly above 0; sparsity difference within "
        f"±{c.sparsity_tolerance}; accuracy difference wholly above −{c.accuracy_tolerance}",
        evidence=evidence,
        could_hold=f"A2I's {kind} F1 against the planted gold exceeds RNP's from the same initial nets by more "
        f"than the seed noise, while both track the same sparsity target within ±{c.sparsity_tolerance} and "
        f"A2I's accuracy stays within {c.accuracy_tolerance} of RNP's.",
        could_fail=f"RNP's F1 exceeds A2I's beyond the seed noise, or A2I's sparsity drifts more than "
        f"{c.sparsity_tolerance} from RNP's, or its accuracy falls more than {c.accuracy_tolerance} below.",
        unit="seed",
        **extra,
    )


def all_claims(runs: pl.DataFrame, params: A2IParams) -> list[Claim]:
    """Every claim the run's data sets allow, in the README's order."""
    inspection = inspection_claim(runs, params)
    claims = [inspection, instruction_claim(runs, params, inspection)]
    if "reviews" in params.grid.datasets:
        claims = [bias_claim(runs, params), *claims, f1_claim(runs, params, "reviews", "f1_text")]
    if "motifs" in params.grid.datasets:
        claims.append(f1_claim(runs, params, "motifs", "f1_graphs"))
    else:
        claims.append(graphs_not_run_claim(params))
    return claims


def graphs_not_run_claim(params: A2IParams) -> Claim:
    """`f1_graphs` where the motif graphs were not run: inconclusive by design, with the reason."""
    c = params.claims
    return verdict_claim(
        id="f1_graphs",
        statement="A2I beats RNP on rationale F1 at similar sparsity (graphs).",
        measured={},
        criterion="paired t intervals over seeds: A2I − RNP edge F1 wholly above 0; sparsity difference within "
        f"±{c.sparsity_tolerance}; accuracy difference wholly above −{c.accuracy_tolerance} (at `scale: full`)",
        evidence=[],
        could_hold="At `scale: full`: A2I's edge F1 against the planted motif exceeds RNP's from the same initial "
        "nets by more than the seed noise, at matched sparsity and accuracy.",
        could_fail="At `scale: full`: RNP's edge F1 exceeds A2I's beyond the seed noise, or A2I's sparsity or "
        "accuracy drifts past its tolerance.",
        unit="seed",
        n=0,
        verdict="inconclusive",
        reason=f"Inconclusive by design: {GRAPHS_AT_FULL}.",
    )


def run(ctx: StepContext) -> None:
    params: A2IParams = ctx.params
    claims = all_claims(read_parquet(ctx.input("runs")), params)
    for claim in claims:
        ctx.log(f"{claim.id}: {claim.verdict}: {claim.reason}")
    write_claims(claims, ctx.output("claims"))
    write_headline(claims, ctx.output("headline"))
