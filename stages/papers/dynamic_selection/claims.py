"""Step `dynamic_selection-claims`: check the paper's three claims on the summary, with intervals over seeds.

Runs are paired by seed (same initialisation, same noisy labels); each comparison is judged through a t interval
of its mean over seeds (`stages.core.claims`). Nothing here reads a wall-clock time, so `claims.json` is
byte-identical on rerun: the paper's time saving is checked by the benchmark step `dynamic_selection-timing`
(`timings/claims.json`, claim `time_saving_at_half`). The baselines are offered the same augmentation
(`random_aug` = random + the same augmentation: the synergy test); the ablations (label-filter
consistency, no augmentation) are reported, never judged.
"""

from __future__ import annotations

import polars as pl

from stages.core.claims import Claim, Evidence, compare, compare_paired, verdict_claim, write_claims
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
    )


def ablation_summary(summary: pl.DataFrame, names: ClaimsParams, label: str) -> dict:
    """An ablation's accuracy and suppression at the noisy setting (reported, not judged)."""
    row = cell(summary, names.noise_rate, label, names.ratio)
    precision = row["suppression_precision_mean"]
    return {
        "accuracy": round(row["accuracy_mean"], 5),
        "suppression_precision": None if precision is None else round(precision, 4),
        "flipped_selection_rate": round(row["flipped_selection_rate_mean"] or 0.0, 4),
    }


def noise_claim(summary: pl.DataFrame, names: ClaimsParams) -> Claim:
    """With label noise the method beats full data, and what it drops is enriched in flipped labels."""
    ours = cell(summary, names.noise_rate, names.method, names.ratio)
    full = cell(summary, names.noise_rate, names.full)
    precision = per_seed(ours, "suppression_precision")
    flipped, clean = per_seed(ours, "flipped_selection_rate"), per_seed(ours, "clean_selection_rate")
    evidence = [
        compare_paired(
            "accuracy − full-data accuracy",
            per_seed(ours, "accuracy"),
            per_seed(full, "accuracy"),
            0.0,
            "above",
            names.confidence,
        ),
        compare(
            "share of suppressed samples that are flipped",
            precision,
            names.noise_rate,
            "above",
            names.confidence,
            note="seeds that suppressed nothing have no precision"
            if len(precision) < len(ours["seed_list"])
            else "",
        ),
    ]
    if set(flipped) == set(clean) and flipped:
        evidence.append(
            compare_paired(
                "epochs trained on: flipped − clean share",
                flipped,
                clean,
                0.0,
                "below",
                names.confidence,
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
            "full-data training, and the samples it suppresses are enriched in flipped labels."
        ),
        measured={
            "accuracy": round(ours["accuracy_mean"], 5),
            "full_accuracy": round(full["accuracy_mean"], 5),
            "suppressed_per_run": ours["suppressed_mean"],
            "suppression_precision": None
            if ours["suppression_precision_mean"] is None
            else round(ours["suppression_precision_mean"], 4),
            "suppression_recall": None if suppression_recall is None else round(suppression_recall, 4),
            "noise_rate": names.noise_rate,
            "flipped_selection_rate": round(ours["flipped_selection_rate_mean"] or 0.0, 4),
            "clean_selection_rate": round(ours["clean_selection_rate_mean"], 4),
            "ablations": {name: ablation_summary(summary, names, name) for name in names.ablations},
        },
        criterion=(
            "t intervals over seeds, wholly on the claimed side: paired acc − full-data acc above 0; precision of "
            "suppressed = flipped above the noise rate (enrichment); flipped − clean share of epochs trained on "
            "below 0"
        ),
        evidence=evidence,
    )


def run(ctx: StepContext) -> None:
    """Evaluate the three claims and write claims.json."""
    summary = read_parquet(ctx.input("summary"))
    names = ctx.params.claims
    claims = [lossless_claim(summary, names), baselines_claim(summary, names), noise_claim(summary, names)]
    for claim in claims:
        ctx.log(f"{claim.id}: {claim.verdict}: {claim.reason}")
    write_claims(claims, ctx.output("claims"))
    write_headline(claims, ctx.output("headline"))
