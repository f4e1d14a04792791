"""Step `dynamic_selection-claims`: check the paper's three claims on the summary."""

from __future__ import annotations

import polars as pl

from stages.core.claims import Claim, write_claims
from stages.core.io import read_parquet
from stages.core.steps import StepContext
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


def lossless_claim(summary: pl.DataFrame, names: ClaimsParams) -> Claim:
    """At the claims ratio and no noise: accuracy within the tolerance of full data, time saving ≥ the target."""
    ours = cell(summary, 0.0, names.method, names.ratio)
    full = cell(summary, 0.0, names.full)
    return Claim(
        id="lossless_at_half",
        statement=(
            f"Training on {names.ratio:.0%} of the samples per epoch keeps test accuracy within "
            f"{names.tolerance * 100:.1f} pt of full-data training while wall-clock training time falls by at least "
            f"{names.min_time_saving:.0%}."
        ),
        measured={
            "accuracy": round(ours["accuracy_mean"], 5),
            "full_accuracy": round(full["accuracy_mean"], 5),
            "accuracy_gap_mean": round(ours["accuracy_gap_mean"], 5),
            "accuracy_gap_worst_seed": round(ours["accuracy_gap_min"], 5),
            "seconds": round(ours["seconds_mean"], 3),
            "full_seconds": round(full["seconds_mean"], 3),
            "time_saving_mean": round(ours["time_saving_mean"], 4),
            "scoring_share_of_epoch_time": round(ours["scoring_share_mean"], 4),
            "seeds": ours["seeds"],
        },
        criterion=(
            f"noise 0, ratio {names.ratio}: mean(acc − full acc) ≥ −{names.tolerance} and mean(1 − seconds / full "
            f"seconds) ≥ {names.min_time_saving} over seeds, paired with the full-data run of the same seed"
        ),
        holds=ours["accuracy_gap_mean"] >= -names.tolerance
        and ours["time_saving_mean"] >= names.min_time_saving,
    )


def baselines_claim(summary: pl.DataFrame, names: ClaimsParams) -> Claim:
    """At every kept ratio without noise, the method's mean accuracy beats each baseline's at the same ratio."""
    clean = summary.filter((pl.col("noise_rate") == 0.0) & (pl.col("method") == names.method))
    per_ratio = {}
    for ratio in clean["ratio"].to_list():
        ours = cell(summary, 0.0, names.method, ratio)["accuracy_mean"]
        others = {name: cell(summary, 0.0, name, ratio)["accuracy_mean"] for name in names.baselines}
        per_ratio[f"{ratio:g}"] = {
            names.method: round(ours, 5),
            **{name: round(value, 5) for name, value in others.items()},
            "beats_all": all(ours > value for value in others.values()),
        }
    return Claim(
        id="beats_dynamic_baselines",
        statement=(
            f"At the same kept ratio, {names.method} is more accurate than "
            f"{' and '.join(names.baselines)} dynamic selection."
        ),
        measured={"mean_accuracy_per_ratio": per_ratio},
        criterion="noise 0, every configured ratio: mean accuracy over seeds > each baseline's mean accuracy",
        holds=bool(per_ratio) and all(entry["beats_all"] for entry in per_ratio.values()),
    )


def noise_claim(summary: pl.DataFrame, names: ClaimsParams) -> Claim:
    """With label noise the method beats full data, and what it drops is enriched in flipped labels."""
    ours = cell(summary, names.noise_rate, names.method, names.ratio)
    full = cell(summary, names.noise_rate, names.full)
    precision = ours["suppression_precision_mean"]
    enriched = precision is not None and precision > names.noise_rate
    trained_less = (ours["flipped_selection_rate_mean"] or 0.0) < ours["clean_selection_rate_mean"]
    return Claim(
        id="noise_robust",
        statement=(
            f"With {names.noise_rate:.0%} label noise, {names.method} at ratio {names.ratio} is more accurate than "
            "full-data training, and the samples it suppresses are enriched in flipped labels."
        ),
        measured={
            "accuracy": round(ours["accuracy_mean"], 5),
            "full_accuracy": round(full["accuracy_mean"], 5),
            "suppressed_per_run": ours["suppressed_mean"],
            "suppression_precision": None if precision is None else round(precision, 4),
            "suppression_recall": None
            if ours["suppression_recall_mean"] is None
            else round(ours["suppression_recall_mean"], 4),
            "noise_rate": names.noise_rate,
            "flipped_selection_rate": round(ours["flipped_selection_rate_mean"] or 0.0, 4),
            "clean_selection_rate": round(ours["clean_selection_rate_mean"], 4),
        },
        criterion=(
            "mean acc > full-data mean acc; precision of suppressed = flipped > the noise rate (enrichment); "
            "flipped samples trained on in fewer epochs than clean ones"
        ),
        holds=ours["accuracy_mean"] > full["accuracy_mean"] and enriched and trained_less,
    )


def run(ctx: StepContext) -> None:
    """Evaluate the three claims and write claims.json."""
    summary = read_parquet(ctx.input("summary"))
    names = ctx.params.claims
    claims = [lossless_claim(summary, names), baselines_claim(summary, names), noise_claim(summary, names)]
    for claim in claims:
        ctx.log(f"{claim.id}: {'holds' if claim.holds else 'does NOT hold'}")
    write_claims(claims, ctx.output("claims"))
