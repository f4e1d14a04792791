"""Step `dynamic_selection-claims`: check the paper's claims on the summary, with intervals over seeds.

Runs are paired by seed (same initialisation, same noisy labels); accuracy comparisons are judged through a t
interval of their mean over seeds (`stages.core.claims`; fewer than three seeds raise `DesignError` naming the
claim). The share of suppressed samples that are flipped is a share, and the flipped − clean share of epochs
trained on a difference of shares: their t intervals are clipped to [0, 1] and [−1, 1], so they hold no
impossible value. Every claim states how it could hold and how it could fail under this design, and its unit
(the seed). Nothing here reads a wall-clock time, so `claims.json` is byte-identical on rerun: the paper's time
saving is checked by the benchmark step `dynamic_selection-timing` (`timings/claims.json`, claim
`time_saving_at_half`). The baselines are offered the same augmentation as the method. The synergy claim is
judged only on a model the augmentation helps: a gate written before any run (random + augmentation more
accurate than plain random beyond the seed noise) makes it inconclusive by design otherwise. The ablation (the
method's selection without augmentation) is reported, never judged on its own.
"""

from __future__ import annotations

import polars as pl

from stages.core.claims import (
    Claim,
    Evidence,
    compare,
    compare_paired,
    evidence_reason,
    paired_differences,
    too_few_seeds,
    verdict_claim,
    write_claims,
)
from stages.core.context import StepContext
from stages.core.headline import write_headline
from stages.core.io import read_parquet
from stages.papers.dynamic_selection.params import ClaimsParams


def cell(summary: pl.DataFrame, noise_rate: float, method: str, ratio: float | None = None) -> dict:
    """The summary row of one (noise rate, method[, ratio])."""
    condition = (pl.col("noise_rate") == noise_rate) & (pl.col("method") == method)
    if ratio is not None:
        condition &= pl.col("ratio") == ratio
    rows = summary.filter(condition)
    if rows.height != 1:
        raise ValueError(f"summary has {rows.height} rows for noise {noise_rate}, {method}, ratio {ratio}")
    return rows.row(0, named=True)


def per_seed(row: dict, name: str) -> dict[str, float]:
    """A summary row's per-seed values of `name` (seeds with no value, e.g. nothing suppressed, left out)."""
    values = row[f"{name}_per_seed"]
    return {
        str(seed): float(value)
        for seed, value in zip(row["seed_list"], values, strict=True)
        if value is not None
    }


def lossless_claim(summary: pl.DataFrame, names: ClaimsParams) -> Claim:
    """At the claims ratio and no noise: accuracy within the tolerance of full data (the time saving that goes
    with it is `timing.time_claim`'s)."""
    ours = cell(summary, 0.0, names.method, names.ratio)
    full = cell(summary, 0.0, names.full)
    evidence = [
        compare(
            "accuracy − full-data accuracy",
            per_seed(ours, "accuracy_gap"),
            -names.tolerance,
            "above",
            names.confidence,
        )
    ]
    return verdict_claim(
        id="lossless_at_half",
        statement=(
            f"Training on {names.ratio:.0%} of the samples per epoch keeps test accuracy within "
            f"{names.tolerance * 100:.1f} pt of full-data training (its time saving: `time_saving_at_half`)."
        ),
        measured={
            "accuracy": round(ours["accuracy_mean"], 5),
            "full_accuracy": round(full["accuracy_mean"], 5),
            "accuracy_gap_mean": round(ours["accuracy_gap_mean"], 5),
            "accuracy_gap_worst_seed": round(ours["accuracy_gap_min"], 5),
            "seeds": ours["seeds"],
        },
        criterion=(
            f"noise 0, ratio {names.ratio}, paired with the full-data run of the same seed: the t interval over "
            f"seeds of acc − full acc lies wholly above −{names.tolerance}"
        ),
        evidence=evidence,
        could_hold=f"Training on {names.ratio:.0%} of the pool per epoch, chosen by density × consistency, loses "
        f"less than {names.tolerance * 100:.1f} pt against the full-data run of the same seed, beyond the seed noise.",
        could_fail=f"{names.ratio:.0%} of the samples per epoch over the same epochs leave the model under-trained, "
        f"or the suppressed clean samples cost accuracy: the gap lies wholly below −{names.tolerance}.",
        unit="seed",
    )


def baselines_claim(summary: pl.DataFrame, names: ClaimsParams) -> Claim:
    """At every kept ratio without noise, the method's accuracy beats each baseline's at the same ratio."""
    clean = summary.filter((pl.col("noise_rate") == 0.0) & (pl.col("method") == names.method))
    per_ratio, evidence = {}, []
    for ratio in clean["ratio"].to_list():
        ours = cell(summary, 0.0, names.method, ratio)
        others = {name: cell(summary, 0.0, name, ratio) for name in names.baselines}
        reported = {name: cell(summary, 0.0, name, ratio) for name in names.ablations}
        per_ratio[f"{ratio:g}"] = {
            names.method: round(ours["accuracy_mean"], 5),
            **{name: round(row["accuracy_mean"], 5) for name, row in {**others, **reported}.items()},
        }
        evidence += [
            compare_paired(
                f"{names.method} − {name} accuracy at ratio {ratio:g}",
                per_seed(ours, "accuracy"),
                per_seed(row, "accuracy"),
                0.0,
                "above",
                names.confidence,
            )
            for name, row in others.items()
        ]
    return verdict_claim(
        id="beats_dynamic_baselines",
        statement=(
            f"At the same kept ratio, {names.method} is more accurate than "
            f"{' and '.join(names.baselines)} dynamic selection (baselines offered the same augmentation)."
        ),
        measured={"mean_accuracy_per_ratio": per_ratio},
        criterion=(
            "noise 0, every configured ratio, each baseline: the t interval over seeds of the paired accuracy "
            "difference (method − baseline) lies wholly above 0; ablations are reported only"
        ),
        evidence=evidence,
        could_hold="The method's density × consistency choice (augmenting the routed sparse, consistent samples) "
        "is more accurate than each baseline at each ratio (plain random, random with the same augmentation on "
        "all or a matched share of its kept samples, InfoBatch-style loss pruning), beyond the seed noise.",
        could_fail="A baseline (uniform random with or without the augmentation, or InfoBatch-style loss pruning, "
        "annealed) is more accurate at some ratio beyond the seed noise.",
        unit="seed",
    )


def synergy_claim(summary: pl.DataFrame, names: ClaimsParams) -> Claim:
    """Selection and augmentation help each other: the augmentation the method routes adds accuracy to its own
    selection, and more than the same share of augmentation adds to uniform random selection. Gated (fixed
    before any run) on the augmentation helping this model at all; otherwise inconclusive by design."""
    synergy = names.synergy
    labels = (names.method, synergy.no_augmentation, synergy.random, synergy.random_share, synergy.random_all)
    accuracy = {label: per_seed(cell(summary, 0.0, label, names.ratio), "accuracy") for label in labels}
    routed_gain = paired_differences(accuracy[names.method], accuracy[synergy.no_augmentation])
    random_gain = paired_differences(accuracy[synergy.random_share], accuracy[synergy.random])
    gate = compare_paired(
        f"gate: {synergy.random_all} − {synergy.random} accuracy (the augmentation helps this model)",
        accuracy[synergy.random_all],
        accuracy[synergy.random],
        0.0,
        "above",
        names.confidence,
    )
    evidence = [
        gate,
        compare(
            f"routed augmentation gain: {names.method} − {synergy.no_augmentation} accuracy",
            routed_gain,
            0.0,
            "above",
            names.confidence,
        ),
        compare(
            f"synergy: routed gain − random gain ({synergy.random_share} − {synergy.random})",
            paired_differences(routed_gain, random_gain),
            0.0,
            "above",
            names.confidence,
        ),
    ]
    verdict, reason = None, None
    if gate.verdict != "holds":
        verdict = "inconclusive"
        reason = (
            "Inconclusive by design: the augmentation does not help this model beyond the seed noise "
            f"({evidence_reason(gate)}), so no comparison can show selection and augmentation helping each other."
        )
    return verdict_claim(
        id="augmentation_synergy",
        statement=(
            "Unifying selection with augmentation exploits their synergy: the augmentation the method routes to "
            "its selected, augmentation-suitable samples adds accuracy, more than the same augmentation adds to "
            "uniform random selection."
        ),
        measured={
            "ratio": names.ratio,
            "mean_accuracy": {
                label: round(sum(values.values()) / len(values), 5) for label, values in accuracy.items()
            },
        },
        criterion=(
            f"noise 0, ratio {names.ratio}, t intervals over seeds of paired differences, wholly above 0: the gate "
            f"{synergy.random_all} − {synergy.random} (if not, inconclusive by design); {names.method} − "
            f"{synergy.no_augmentation}; and that gain minus ({synergy.random_share} − {synergy.random}), the gain "
            "of augmenting a random matched share of a random selection"
        ),
        evidence=evidence,
        could_hold="On a model the augmentation helps, augmenting the sparse, consistent samples the method keeps "
        "adds accuracy to its selection, and more than augmenting a random matched share adds to random selection, "
        "beyond the seed noise.",
        could_fail="The routed augmentation adds nothing or costs accuracy against the same selection without it, "
        "or it adds less than a random matched share adds to random selection, beyond the seed noise.",
        unit="seed",
        verdict=verdict,
        reason=reason,
    )


def suppression_evidence(precision: dict[str, float], seeds: int, names: ClaimsParams) -> Evidence:
    """The share of suppressed samples that are flipped against the noise rate: a t interval over seeds clipped
    to [0, 1] (a share); inconclusive when the design has seeds enough but fewer than three suppressed anything."""
    name = "share of suppressed samples that are flipped"
    note = "seeds that suppressed nothing have no precision" if len(precision) < seeds else ""
    if too_few_seeds(len(precision)) and not too_few_seeds(seeds):
        return Evidence(
            name=name,
            per_seed=precision,
            verdict="inconclusive",
            threshold=names.noise_rate,
            direction="above",
            note="; ".join(
                filter(None, [note, f"{len(precision)} seeds with a precision, too few for an interval"])
            ),
        )
    return compare(name, precision, names.noise_rate, "above", names.confidence, note=note, bounds=(0.0, 1.0))


def noise_claim(summary: pl.DataFrame, names: ClaimsParams) -> Claim:
    """With label noise the method beats full data, and what it drops is enriched in flipped labels."""
    ours = cell(summary, names.noise_rate, names.method, names.ratio)
    full = cell(summary, names.noise_rate, names.full)
    precision = per_seed(ours, "suppression_precision")
    flipped, clean = per_seed(ours, "flipped_selection_rate"), per_seed(ours, "clean_selection_rate")
    peers = {name: cell(summary, names.noise_rate, name, names.ratio) for name in names.noise_baselines}
    evidence = [
        compare_paired(
            "accuracy − full-data accuracy",
            per_seed(ours, "accuracy"),
            per_seed(full, "accuracy"),
            0.0,
            "above",
            names.confidence,
        ),
        *(
            compare_paired(
                f"accuracy − {name} accuracy at ratio {names.ratio:g}",
                per_seed(ours, "accuracy"),
                per_seed(row, "accuracy"),
                0.0,
                "above",
                names.confidence,
            )
            for name, row in peers.items()
        ),
        suppression_evidence(precision, len(ours["seed_list"]), names),
    ]
    if set(flipped) == set(clean) and flipped:
        evidence.append(
            compare(
                "epochs trained on: flipped − clean share",
                paired_differences(flipped, clean),
                0.0,
                "below",
                names.confidence,
                bounds=(-1.0, 1.0),
            )
        )
    else:
        evidence.append(
            Evidence(
                name="epochs trained on: flipped − clean share",
                verdict="inconclusive",
                note="no flipped samples in some seed, so the rates cannot be compared",
            )
        )
    suppression_recall = ours["suppression_recall_mean"]
    return verdict_claim(
        id="noise_robust",
        statement=(
            f"With {names.noise_rate:.0%} label noise, {names.method} at ratio {names.ratio} is more accurate than "
            f"full-data training and than {' and '.join(names.noise_baselines)} at the same ratio, and the samples "
            "it suppresses are enriched in flipped labels."
        ),
        measured={
            "accuracy": round(ours["accuracy_mean"], 5),
            "full_accuracy": round(full["accuracy_mean"], 5),
            **{f"{name}_accuracy": round(row["accuracy_mean"], 5) for name, row in peers.items()},
            "suppressed_per_run": ours["suppressed_mean"],
            "suppression_precision": None
            if ours["suppression_precision_mean"] is None
            else round(ours["suppression_precision_mean"], 4),
            "suppression_recall": None if suppression_recall is None else round(suppression_recall, 4),
            "noise_rate": names.noise_rate,
            "flipped_selection_rate": round(ours["flipped_selection_rate_mean"] or 0.0, 4),
            "clean_selection_rate": round(ours["clean_selection_rate_mean"], 4),
        },
        criterion=(
            "t intervals over seeds, wholly on the claimed side: paired acc − full-data acc above 0; paired acc − "
            f"acc of each of {', '.join(names.noise_baselines)} at the same ratio above 0; precision of suppressed "
            "= flipped (clipped to [0, 1]) above the noise rate (enrichment); the paired flipped − clean share of "
            "epochs trained on (clipped to [−1, 1]) below 0"
        ),
        evidence=evidence,
        could_hold="Suppressing the samples whose observed label the cross-fitted projection finds improbable "
        f"removes mostly flipped labels (precision above {names.noise_rate}), so the method beats full data "
        f"and uniform selection (with or without the augmentation), which train on all {names.noise_rate:.0%} "
        "flipped labels.",
        could_fail="The projection, fitted on the same noisy labels, misreads clean samples as flipped (precision "
        "at or below the noise rate), or full data or random selection (a regulariser against memorising flips) "
        "trains to the higher accuracy beyond the seed noise.",
        unit="seed",
    )


def run(ctx: StepContext) -> None:
    """Evaluate the four claims and write claims.json."""
    summary = read_parquet(ctx.input("summary"))
    names = ctx.params.claims
    claims = [
        lossless_claim(summary, names),
        baselines_claim(summary, names),
        synergy_claim(summary, names),
        noise_claim(summary, names),
    ]
    for claim in claims:
        ctx.log(f"{claim.id}: {claim.verdict}: {claim.reason}")
    write_claims(claims, ctx.output("claims"))
    write_headline(claims, ctx.output("headline"))
